// The one translation unit that compiles asio (ASIO_SEPARATE_COMPILATION).
#include "asio/impl/src.hpp"
