// PackedRecord: a V6TrainingRecord kept small while it waits in the
// reservoir. Every field is kept as is except the policy, of which only the
// entries that are not the illegal-move marker (-1.0f, compared bit for
// bit) are kept, as (index, value) pairs. A position with 20-40 legal moves
// takes about 1.2 KB instead of 8,356 bytes: a reservoir of a million
// frames fits in about 1.2 GB instead of 8.4 GB, and each position moves a
// seventh of the memory on its way to the tensors.
//
//   PackedRecord packed = PackedRecord::Pack(record);
//   packed.Unpack(&scratch);  // bit for bit the record that was packed
//
// Promises: Unpack restores every byte of the packed record (NaN payloads,
// -0.0 and other markers included). A policy with more entries than the
// pairs save is kept whole. Moving copies a pointer and an integer. The
// bytes live in a recycled block (record_blocks.h): a record packed on one
// thread and dropped on another costs no malloc lock.
#ifndef SLUICE_STAGES_LC0_FORMAT_PACKED_RECORD_H_
#define SLUICE_STAGES_LC0_FORMAT_PACKED_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "stages/lc0/format/policy_entries.h"
#include "stages/lc0/format/training_record.h"

namespace sluice::lc0 {

class PackedRecord {
 public:
  // An empty record (Unpack must not be called on it).
  PackedRecord() = default;
  PackedRecord(PackedRecord&& other) noexcept
      : bytes_(std::exchange(other.bytes_, nullptr)),
        policy_entries_(other.policy_entries_) {}
  PackedRecord& operator=(PackedRecord&& other) noexcept;
  ~PackedRecord();

  static PackedRecord Pack(const V6TrainingRecord& record);
  // The same, with the record's policy entries already found. A V7 record
  // (version 7) also keeps its `v7_tail` (the bytes after its first 8356;
  // when null, q_st from `reserved` and no played indices).
  static PackedRecord Pack(const V6TrainingRecord& record,
                           const PolicyEntries& entries,
                           const V7Tail* v7_tail = nullptr);
  // Writes the packed record to `out` (all of its 8,356 bytes).
  void Unpack(V6TrainingRecord* out) const;

  // The parts of Unpack, for a reader that keeps `out->probabilities` all
  // markers between records (packed_expander.h) and so never rewrites the
  // 1,858 entries of a record whose legal moves are a few dozen.
  //
  // Writes every field of `out` but the policy.
  void UnpackAllButPolicy(V6TrainingRecord* out) const;
  // Writes the kept policy entries (all of them for a policy kept whole)
  // and leaves the others as they were: over a policy of markers, the
  // record's policy.
  void ScatterPolicy(V6TrainingRecord* out) const;
  // Sets the entries ScatterPolicy wrote back to the marker.
  void RestoreMarkers(V6TrainingRecord* out) const;

  // Asks the CPU to start loading the record's bytes into the cache, for a
  // record about to be unpacked (a hint: no effect on results).
  void Prefetch() const;

  bool empty() const { return bytes_ == nullptr; }
  uint32_t version() const;
  // The V7 fields of a V7 record; nullopt for older versions.
  std::optional<V7Tail> v7_tail() const;
  uint32_t input_format() const;
  // Bytes held on the heap.
  size_t heap_bytes() const;

 private:
  // Policy entries kept as pairs; 0xFFFF means the whole policy is kept.
  static constexpr uint16_t kWholePolicy = 0xFFFF;

  // Where the policy starts in bytes_ (after the V7 tail, if any).
  size_t PolicyOffset() const;

  // Writes, at each kept entry p's index in `out`'s policy, the 4 bytes at
  // values + p * value_stride (a stride of 0 writes one value everywhere).
  void WriteEntries(V6TrainingRecord* out, const std::byte* values,
                    size_t value_stride) const;

  // A block of heap_bytes() from record_blocks, or nullptr.
  std::byte* bytes_ = nullptr;
  uint16_t policy_entries_ = 0;
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FORMAT_PACKED_RECORD_H_
