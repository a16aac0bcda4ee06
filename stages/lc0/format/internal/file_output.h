// Output helpers for the data generator: a minimal ustar writer and atomic
// file writes (temporary name, then rename), so a directory watcher never
// sees a partial file.
//
//   std::string tar;
//   AppendTarMember("training.1.gz", gz_bytes, /*mtime=*/0, tar);
//   FinishTar(tar);
//   SLUICE_RETURN_IF_ERROR(WriteFileAtomically("/data", "a.tar", tar));
#ifndef SLUICE_STAGES_LC0_FORMAT_INTERNAL_FILE_OUTPUT_H_
#define SLUICE_STAGES_LC0_FORMAT_INTERNAL_FILE_OUTPUT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace sluice::lc0::internal {

// Appends a regular-file member (POSIX ustar header, mode 0644, owner 0,
// the given mtime) and its data padded to 512 bytes. Fails when `name` does
// not fit the 100-byte ustar name field.
absl::Status AppendTarMember(std::string_view name, std::string_view data,
                             int64_t mtime, std::string& tar);

// Appends the end-of-archive marker (two zero blocks) and pads the archive
// to GNU tar's 10240-byte record size.
void FinishTar(std::string& tar);

// Writes `bytes` to `dir`/`name` atomically: to the hidden `.name.tmp` in
// the same directory first, then rename(2). Leaves no temporary on failure.
absl::Status WriteFileAtomically(const std::string& dir,
                                 const std::string& name,
                                 std::string_view bytes);

}  // namespace sluice::lc0::internal

#endif  // SLUICE_STAGES_LC0_FORMAT_INTERNAL_FILE_OUTPUT_H_
