// Whole-buffer gunzip with a limit on the decompressed size.
//
//   SLUICE_ASSIGN_OR_RETURN(std::string chunk,
//                           io::Gunzip(compressed, /*max_output_bytes=*/64 <<
//                           20));
//
// Backed by ISA-L (igzip), the fastest of zlib, libdeflate and ISA-L on lc0
// chunks (bench/gzip_benchmark.cc).
#ifndef SLUICE_IO_GZIP_H_
#define SLUICE_IO_GZIP_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "io/recycled_bytes.h"

namespace sluice::io {

// Decompresses `compressed`, one gzip member or several back to back (their
// outputs concatenated), and returns the whole output. Errors, never a
// partial result:
//  - InvalidArgument when the input is empty or does not start with the gzip
//    magic bytes (not gzip), or is larger than 4 GiB;
//  - DataLoss when a member is corrupt or truncated (bad deflate data, CRC or
//    size mismatch) or when bytes after a member do not start another one;
//  - ResourceExhausted when the output would exceed `max_output_bytes` (a
//    gzip bomb); the message names the limit.
// Thread-safe.
absl::StatusOr<std::string> Gunzip(std::string_view compressed,
                                   size_t max_output_bytes);

// As Gunzip, but replaces the contents of `*out`, reusing its capacity: a
// caller decompressing many chunks into one buffer avoids a fresh
// allocation and its page faults per chunk. On error `*out` holds
// unspecified bytes.
absl::Status GunzipInto(std::string_view compressed, size_t max_output_bytes,
                        std::string* out);
// The same into recycled bytes (e.g. a chunk's, to be handed on).
absl::Status GunzipInto(std::string_view compressed, size_t max_output_bytes,
                        RecycledBytes* out);

}  // namespace sluice::io

#endif  // SLUICE_IO_GZIP_H_
