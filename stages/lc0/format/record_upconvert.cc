#include "stages/lc0/format/record_upconvert.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace sluice::lc0 {

absl::StatusOr<RecordVersion> DetectVersion(std::string_view chunk) {
  if (chunk.size() < sizeof(uint32_t)) {
    return absl::InvalidArgumentError(
        absl::StrCat("chunk of ", chunk.size(),
                     " bytes is too short to hold a record version"));
  }
  uint32_t version;
  std::memcpy(&version, chunk.data(), sizeof(version));
  switch (version) {
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
      return static_cast<RecordVersion>(version);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown lc0 record version ", version));
  }
}

size_t RecordSize(RecordVersion version) {
  switch (version) {
    case RecordVersion::kV3:
      return kV3RecordSize;
    case RecordVersion::kV4:
      return kV4RecordSize;
    case RecordVersion::kV5:
      return kV5RecordSize;
    case RecordVersion::kV6:
      return kV6RecordSize;
    case RecordVersion::kV7:
      return kV7RecordSize;
  }
  return 0;
}

void UpconvertToV6(std::string_view record, RecordVersion version,
                   V6TrainingRecord* out) {
  auto* dst = reinterpret_cast<char*>(out);
  if (version == RecordVersion::kV7) {
    std::memcpy(dst, record.data(), sizeof(*out));
    return;
  }
  if (version == RecordVersion::kV5 || version == RecordVersion::kV6) {
    // V5 already has input_format; its tail (from result_q on) is zero.
    std::memcpy(dst, record.data(), record.size());
    std::memset(dst + record.size(), 0, sizeof(*out) - record.size());
    return;
  }
  std::memset(dst, 0, sizeof(*out));
  // V3/V4: version, then input_format = 1, then the rest shifted by 4 bytes.
  // V3 lacks root_q..best_d (16 bytes), V4 lacks root_m..plies_left too; both
  // end up zero from the memset.
  constexpr size_t kVersionBytes = sizeof(uint32_t);
  std::memcpy(dst, record.data(), kVersionBytes);
  out->input_format = 1;
  std::memcpy(dst + offsetof(V6TrainingRecord, probabilities),
              record.data() + kVersionBytes, record.size() - kVersionBytes);
}

const V6TrainingRecord& ViewAsV6(std::string_view record, RecordVersion version,
                                 V6TrainingRecord* scratch) {
  static_assert(alignof(V6TrainingRecord) == 1);
  if (HasV6Fields(version)) {
    return *reinterpret_cast<const V6TrainingRecord*>(record.data());
  }
  UpconvertToV6(record, version, scratch);
  return *scratch;
}

}  // namespace sluice::lc0
