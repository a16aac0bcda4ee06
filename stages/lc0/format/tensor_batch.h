// TensorBatch: the five float32 training tensors of B positions (FORMAT.md,
// "The training tuple") in one 64-byte-aligned allocation, plus the game id
// of each position.
//
//   SLUICE_ASSIGN_OR_RETURN(TensorBatch batch, TensorBatch::Create(1024));
//   expander.Expand(record, &batch, slot);   // tensor_expansion.h
//   batch.set_game_id(slot, chunk_hash);
//   TensorView planes = batch.view(TensorId::kPlanes);
//   std::shared_ptr<void> owner = std::move(batch).ReleaseOwnership();
//   // `planes.data` stays valid, without a copy, while `owner` lives.
#ifndef SLUICE_STAGES_LC0_FORMAT_TENSOR_BATCH_H_
#define SLUICE_STAGES_LC0_FORMAT_TENSOR_BATCH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/batch_buffer_pool.h"
#include "engine/typed_batch.h"

namespace sluice::lc0 {

// The five tensors, in the order of the training tuple, then the four a
// batch of V7 fields adds (float32 (B,) each; the played indices as
// floats, 65535 for none).
enum class TensorId {
  kPlanes,
  kProbs,
  kWinner,
  kBestQ,
  kPliesLeft,
  kQSt,
  kDSt,
  kOppPlayedIdx,
  kNextPlayedIdx
};
inline constexpr int kNumTensors = 5;
inline constexpr int kMaxTensors = 9;
// Every tensor starts at a multiple of this inside the allocation.
inline constexpr size_t kTensorAlignment = kBatchBufferAlignment;

// One tensor inside a batch's allocation: batch-first shape, row-major.
struct TensorView {
  std::string_view name;  // "planes", "probs", "winner", "best_q", "plies_left"
  float* data = nullptr;
  int rank = 0;
  std::array<int64_t, 4> shape{};  // the first `rank` entries are used
  size_t bytes = 0;                // product of the shape times 4
};

// Owns one aligned allocation holding all five tensors of `size()`
// positions. Move-only; frees the allocation on destruction unless ownership
// was handed over. Contents start uninitialized: callers fill every slot.
class TensorBatch {
 public:
  // Allocates a batch of `batch_size` positions, from `pool` when given
  // (its buffers must be AllocationBytes(batch_size) large; the buffer goes
  // back to the pool when the batch's last owner drops it). InvalidArgument
  // for 0 or a pool of another size, ResourceExhausted when the allocation
  // fails.
  // With `v7_fields` the batch also holds q_st, d_st, opp_played_idx and
  // next_played_idx.
  static absl::StatusOr<TensorBatch> Create(
      size_t batch_size, std::shared_ptr<BatchBufferPool> pool = nullptr,
      bool v7_fields = false);

  // Bytes of the allocation of a batch of `batch_size` positions.
  static size_t AllocationBytes(size_t batch_size, bool v7_fields = false);

  TensorBatch(TensorBatch&& other) noexcept;
  TensorBatch& operator=(TensorBatch&& other) noexcept;
  TensorBatch(const TensorBatch&) = delete;
  TensorBatch& operator=(const TensorBatch&) = delete;
  ~TensorBatch() = default;

  // Number of positions B; 0 after a move or ReleaseOwnership().
  size_t size() const { return size_; }

  // The tensor `id`; data is null after a move or ReleaseOwnership().
  TensorView view(TensorId id) const;

  // Per-slot pointers (slot < size()): planes of slot i are 112*64 floats,
  // probs 1858, winner 3, best_q 3, plies_left 1.
  float* planes(size_t slot) const;
  float* probs(size_t slot) const;
  float* winner(size_t slot) const;
  float* best_q(size_t slot) const;
  float* plies_left(size_t slot) const;
  // The V7 tensor `id` (kQSt and after) of slot `slot`; the batch must hold
  // V7 fields.
  float* v7_field(TensorId id, size_t slot) const;
  bool has_v7_fields() const { return tensors_ == kMaxTensors; }

  // The game (chunk) a position came from, for shuffle-quality metrics.
  uint64_t game_id(size_t slot) const { return game_ids_[slot]; }
  void set_game_id(size_t slot, uint64_t id) { game_ids_[slot] = id; }
  std::span<const uint64_t> game_ids() const { return game_ids_; }

  // Keeps the first `size` positions (0 < size <= size(); others are
  // ignored): views and shapes then cover only those, still in place (each
  // tensor keeps its offset). For a final, partial batch; no copy.
  void Truncate(size_t size);

  // Total bytes of the allocation (tensors plus alignment padding).
  size_t allocation_bytes() const { return allocation_bytes_; }

  // Hands the allocation to the returned owner without copying: views and
  // slot pointers taken before stay valid for as long as any copy of the
  // owner lives, and the owner frees the allocation. The batch is left
  // empty (size() == 0). Game ids stay readable until the batch dies.
  std::shared_ptr<void> ReleaseOwnership() &&;

  // The workload-neutral form the pipeline hands on (engine/typed_batch.h):
  // the five (or nine) float32 tensors by name, in TensorId order, over the
  // same allocation (no copy), with the game ids as example ids. The batch is
  // left empty, as after ReleaseOwnership().
  TypedBatch ToTypedBatch() &&;

 private:
  // Frees the buffer, or hands it back to its pool.
  struct BufferDeleter {
    std::shared_ptr<BatchBufferPool> pool;
    void operator()(void* p) const;
  };

  TensorBatch(size_t batch_size, bool v7_fields);

  size_t size_ = 0;
  int tensors_ = kNumTensors;
  size_t allocation_bytes_ = 0;
  std::array<size_t, kMaxTensors> offsets_{};  // float offsets, 64B-aligned
  std::unique_ptr<float, BufferDeleter> data_;
  std::vector<uint64_t> game_ids_;
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_FORMAT_TENSOR_BATCH_H_
