// Precompiled for every googletest binary: the libraries' shared headers,
// googletest and the config and metrics messages most suites build.
#include "cmake/pch/library_headers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"
