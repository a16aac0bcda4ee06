// PolicyEntries: the policy entries of a record that are not the
// illegal-move marker (-1.0f, compared bit for bit), i.e. the legal moves.
// A position has 20-40 of them among 1,858 entries. They are found once per
// position, in one pass of sixteen-at-a-time compares, and shared: the
// validator checks only these entries (a marker is always valid) and the
// packer keeps only these.
//
//   const PolicyEntries entries = PolicyEntries::Find(record);
//   if (auto reason = CheckRecord(record, entries, version, format)) ...
//   PackedRecord packed = PackedRecord::Pack(record, entries);
#ifndef SLUICE_STAGES_LC0_FORMAT_POLICY_ENTRIES_H_
#define SLUICE_STAGES_LC0_FORMAT_POLICY_ENTRIES_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "stages/lc0/format/training_record.h"

namespace sluice::lc0 {

struct PolicyEntries {
  // The entries of `record.probabilities` whose bits differ from -1.0f.
  static PolicyEntries Find(const V6TrainingRecord& record);

  // Ascending policy indices; the first `count` are used.
  std::array<uint16_t, kPolicySize> index;
  size_t count = 0;
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FORMAT_POLICY_ENTRIES_H_
