// sluice's public C++ API, in one include:
//
//   #include "sluice/sluice.h"
//
// Loader (sluice/loader.h) runs a pipeline and hands out Batch objects
// (sluice/batch.h); errors are sluice/errors.h's exceptions; configs,
// metrics and control messages are the protos in proto/. See
// docs/cpp_api.md.
#ifndef SLUICE_SLUICE_SLUICE_H_
#define SLUICE_SLUICE_SLUICE_H_

#include "sluice/batch.h"
#include "sluice/errors.h"
#include "sluice/loader.h"

#endif  // SLUICE_SLUICE_SLUICE_H_
