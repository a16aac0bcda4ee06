// Record versions and up-conversion of V3/V4/V5 records to the V6 layout.
//
//   SLUICE_ASSIGN_OR_RETURN(RecordVersion v, DetectVersion(chunk));
//   V6TrainingRecord scratch;
//   for (size_t off = 0; off < chunk.size(); off += RecordSize(v)) {
//     const V6TrainingRecord& rec =
//         ViewAsV6(chunk.substr(off, RecordSize(v)), v, &scratch);
//   }
#ifndef SLUICE_STAGES_LC0_FORMAT_RECORD_UPCONVERT_H_
#define SLUICE_STAGES_LC0_FORMAT_RECORD_UPCONVERT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "stages/lc0/format/training_record.h"

namespace sluice::lc0 {

// The record versions sluice reads; the value is the on-disk version number.
// V7 (lczero-training's, training_record.h) is V6 followed by V7Tail.
enum class RecordVersion : uint32_t {
  kV3 = 3,
  kV4 = 4,
  kV5 = 5,
  kV6 = 6,
  kV7 = 7
};

// V6 and V7 records carry result_q/result_d (older ones an int8 result).
inline bool HasV6Fields(RecordVersion version) {
  return version == RecordVersion::kV6 || version == RecordVersion::kV7;
}

// Reads the little-endian version from the chunk's first 4 bytes. Returns
// InvalidArgument when the chunk has fewer than 4 bytes or the version is not
// 3, 4, 5, 6 or 7. Does not look at the chunk's size otherwise.
absl::StatusOr<RecordVersion> DetectVersion(std::string_view chunk);

// The on-disk record size of `version`: 8276, 8292, 8308, 8356 or 8396
// bytes.
size_t RecordSize(RecordVersion version);

// Writes `record` (exactly RecordSize(version) bytes of that version) into
// `out` in the V6 layout, as FORMAT.md specifies: V3/V4 get input_format = 1
// inserted after the version, and every field newer than `version` is zero.
// The version field keeps its old value. A V6 record is copied as is, a V7
// record's first 8356 bytes too (its V7Tail follows them).
// Precondition (the caller's, not checked): record.size() ==
// RecordSize(version).
void UpconvertToV6(std::string_view record, RecordVersion version,
                   V6TrainingRecord* out);

// `record` in the V6 layout: for a V6 or V7 record its own bytes, read in place
// (no copy: the layout is packed, so any address will do); otherwise
// UpconvertToV6 into `*scratch`. The reference is valid while those bytes
// are. Same precondition as UpconvertToV6.
const V6TrainingRecord& ViewAsV6(std::string_view record, RecordVersion version,
                                 V6TrainingRecord* scratch);

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FORMAT_RECORD_UPCONVERT_H_
