// Validity checks on lc0 chunks and records (FORMAT.md, "Validity"). Each
// rejection has a reason with a stable snake_case name, used as a metrics key.
//
//   ChunkCheck check = CheckChunk(chunk);
//   if (check.reject) { CountRejected(RejectReasonName(*check.reject)); ... }
//   for (size_t i = 0; i < check.record_count; ++i) {
//     V6TrainingRecord rec;
//     UpconvertToV6(chunk.substr(i * check.record_size, check.record_size),
//                   check.version, &rec);
//     if (auto reason = CheckRecord(rec, check.version, expected_format)) ...
//   }
//
// Chunk-level reasons drop the whole chunk; record-level reasons drop one
// record. Which record checks apply to up-converted V3/V4/V5 records:
//  - the fields a version lacks are zero after up-conversion and pass every
//    range and NaN check, so those checks run on all versions unchanged;
//  - result_q/result_d (V6 only) give the winner of a V6 record, the int8
//    `result` gives it for older ones, so `invalid_result` (result not -1, 0
//    or 1) applies only to V3/V4/V5 and the int8 of a V6 record is ignored;
//  - V3/V4 records carry input_format 1 after up-conversion.
#ifndef SLUICE_STAGES_LC0_FORMAT_RECORD_VALIDATOR_H_
#define SLUICE_STAGES_LC0_FORMAT_RECORD_VALIDATOR_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "stages/lc0/format/policy_entries.h"
#include "stages/lc0/format/record_upconvert.h"
#include "stages/lc0/format/training_record.h"

namespace sluice::lc0 {

// Why a chunk or a record is rejected. The first three are chunk-level.
enum class RejectReason {
  // Chunk-level.
  kEmptyChunk,       // zero bytes
  kUnknownVersion,   // first 4 bytes are not 3, 4, 5, 6 or 7
  kSizeNotMultiple,  // size not a multiple of the record size (or < 4 bytes)
  // Record-level.
  kVersionMismatch,  // record's version differs from the chunk's first one
  kUnexpectedInputFormat,
  kNonfiniteProbability,
  kNegativeProbability,  // negative and not the -1 illegal-move marker
  kProbabilitySum,       // legal probabilities do not sum to 1 +- 1e-3
  kNanField,             // NaN in a float other than probabilities/orig_*
  kBestQRange,           // best_q outside [-1, 1]
  kResultQRange,         // result_q outside [-1, 1]
  kBestDRange,           // best_d outside [0, 1]
  kResultDRange,         // result_d outside [0, 1]
  kNegativePliesLeft,
  kInvalidResult,  // pre-V6 int8 result not in {-1, 0, 1}
};

// The stable snake_case name of `reason`, e.g. "size_not_multiple".
std::string_view RejectReasonName(RejectReason reason);

// True for the reasons that reject a whole chunk.
bool IsChunkLevel(RejectReason reason);

// The outcome of the chunk-level checks.
struct ChunkCheck {
  // Set when the whole chunk is rejected; the other fields are then unset.
  std::optional<RejectReason> reject;
  RecordVersion version = RecordVersion::kV6;
  size_t record_size = 0;
  size_t record_count = 0;  // >= 1 when accepted
};

// Runs the chunk-level checks on a decompressed chunk, in this order:
// empty_chunk, size_not_multiple (fewer than 4 bytes), unknown_version,
// size_not_multiple.
ChunkCheck CheckChunk(std::string_view chunk);

// Runs the record-level checks on one up-converted record of a chunk whose
// first record has `chunk_version`, for a run expecting
// `expected_input_format`. Returns the first failing reason in the enum's
// order, or nullopt when the record is valid.
std::optional<RejectReason> CheckRecord(const V6TrainingRecord& record,
                                        RecordVersion chunk_version,
                                        uint32_t expected_input_format);
// The same, with the record's policy entries already found (the checks on
// probabilities look only at them).
std::optional<RejectReason> CheckRecord(const V6TrainingRecord& record,
                                        const PolicyEntries& entries,
                                        RecordVersion chunk_version,
                                        uint32_t expected_input_format);

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FORMAT_RECORD_VALIDATOR_H_
