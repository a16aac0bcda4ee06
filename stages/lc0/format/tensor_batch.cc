#include "stages/lc0/format/tensor_batch.h"

#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/batch_buffer_pool.h"
#include "stages/lc0/format/training_record.h"

namespace sluice::lc0 {
namespace {

constexpr size_t kPlaneFloats = static_cast<size_t>(kInputPlanes) * 64;

// Floats per position of each tensor, in TensorId order.
constexpr std::array<size_t, kMaxTensors> kFloatsPerSlot = {
    kPlaneFloats, kPolicySize, 3, 3, 1, 1, 1, 1, 1};
constexpr std::array<std::string_view, kMaxTensors> kNames = {
    "planes", "probs", "winner",         "best_q",         "plies_left",
    "q_st",   "d_st",  "opp_played_idx", "next_played_idx"};

constexpr size_t RoundUp(size_t bytes) {
  return (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

size_t Index(TensorId id) { return static_cast<size_t>(id); }

}  // namespace

void TensorBatch::BufferDeleter::operator()(void* p) const {
  if (pool != nullptr) {
    pool->Release(p);
  } else {
    std::free(p);
  }
}

size_t TensorBatch::AllocationBytes(size_t batch_size, bool v7_fields) {
  return TensorBatch(batch_size, v7_fields).allocation_bytes_;
}

TensorBatch::TensorBatch(size_t batch_size, bool v7_fields)
    : size_(batch_size),
      tensors_(v7_fields ? kMaxTensors : kNumTensors),
      game_ids_(batch_size) {
  size_t bytes = 0;
  for (int t = 0; t < tensors_; ++t) {
    offsets_[t] = bytes / sizeof(float);
    bytes += RoundUp(kFloatsPerSlot[t] * batch_size * sizeof(float));
  }
  allocation_bytes_ = bytes;
}

absl::StatusOr<TensorBatch> TensorBatch::Create(
    size_t batch_size, std::shared_ptr<BatchBufferPool> pool, bool v7_fields) {
  if (batch_size == 0) {
    return absl::InvalidArgumentError("TensorBatch needs at least 1 position");
  }
  // Largest per-position footprint, with room for the padding.
  constexpr size_t kBytesPerSlot = (kPlaneFloats + kPolicySize + 7) * 4;
  if (batch_size > (std::numeric_limits<size_t>::max() / 2) / kBytesPerSlot) {
    return absl::ResourceExhaustedError(
        absl::StrCat("TensorBatch of ", batch_size, " positions is too large"));
  }
  TensorBatch batch(batch_size, v7_fields);
  if (pool != nullptr && pool->bytes() != batch.allocation_bytes_) {
    return absl::InvalidArgumentError(
        absl::StrCat("TensorBatch of ", batch_size, " positions needs ",
                     batch.allocation_bytes_, "-byte buffers, the pool has ",
                     pool->bytes()));
  }
  void* p = pool != nullptr
                ? pool->Acquire()
                : std::aligned_alloc(kTensorAlignment, batch.allocation_bytes_);
  if (p == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", batch.allocation_bytes_,
                     " bytes for a TensorBatch of ", batch_size, " positions"));
  }
  batch.data_ = std::unique_ptr<float, BufferDeleter>(
      static_cast<float*>(p), BufferDeleter{std::move(pool)});
  return batch;
}

TensorBatch::TensorBatch(TensorBatch&& other) noexcept
    : size_(std::exchange(other.size_, 0)),
      tensors_(other.tensors_),
      allocation_bytes_(std::exchange(other.allocation_bytes_, 0)),
      offsets_(other.offsets_),
      data_(std::move(other.data_)),
      game_ids_(std::move(other.game_ids_)) {}

TensorBatch& TensorBatch::operator=(TensorBatch&& other) noexcept {
  size_ = std::exchange(other.size_, 0);
  tensors_ = other.tensors_;
  allocation_bytes_ = std::exchange(other.allocation_bytes_, 0);
  offsets_ = other.offsets_;
  data_ = std::move(other.data_);
  game_ids_ = std::move(other.game_ids_);
  return *this;
}

TensorView TensorBatch::view(TensorId id) const {
  const size_t t = Index(id);
  TensorView v;
  v.name = kNames[t];
  v.data = data_ ? data_.get() + offsets_[t] : nullptr;
  const auto b = static_cast<int64_t>(size_);
  switch (id) {
    case TensorId::kPlanes:
      v.rank = 4;
      v.shape = {b, kInputPlanes, 8, 8};
      break;
    case TensorId::kProbs:
      v.rank = 2;
      v.shape = {b, kPolicySize, 0, 0};
      break;
    case TensorId::kWinner:
    case TensorId::kBestQ:
      v.rank = 2;
      v.shape = {b, 3, 0, 0};
      break;
    case TensorId::kPliesLeft:
    case TensorId::kQSt:
    case TensorId::kDSt:
    case TensorId::kOppPlayedIdx:
    case TensorId::kNextPlayedIdx:
      v.rank = 1;
      v.shape = {b, 0, 0, 0};
      break;
  }
  v.bytes = kFloatsPerSlot[t] * size_ * sizeof(float);
  return v;
}

float* TensorBatch::planes(size_t slot) const {
  return data_.get() + offsets_[0] + slot * kFloatsPerSlot[0];
}
float* TensorBatch::probs(size_t slot) const {
  return data_.get() + offsets_[1] + slot * kFloatsPerSlot[1];
}
float* TensorBatch::winner(size_t slot) const {
  return data_.get() + offsets_[2] + slot * kFloatsPerSlot[2];
}
float* TensorBatch::best_q(size_t slot) const {
  return data_.get() + offsets_[3] + slot * kFloatsPerSlot[3];
}
float* TensorBatch::plies_left(size_t slot) const {
  return data_.get() + offsets_[4] + slot * kFloatsPerSlot[4];
}
float* TensorBatch::v7_field(TensorId id, size_t slot) const {
  return data_.get() + offsets_[Index(id)] + slot;
}

void TensorBatch::Truncate(size_t size) {
  if (size == 0 || size >= size_) return;
  size_ = size;
  game_ids_.resize(size);
}

std::shared_ptr<void> TensorBatch::ReleaseOwnership() && {
  size_ = 0;
  allocation_bytes_ = 0;
  BufferDeleter deleter = data_.get_deleter();
  return std::shared_ptr<void>(data_.release(), std::move(deleter));
}

TypedBatch TensorBatch::ToTypedBatch() && {
  const size_t size = size_;
  std::vector<BatchTensor> tensors;
  tensors.reserve(tensors_);
  for (int t = 0; t < tensors_; ++t) {
    const TensorView v = view(static_cast<TensorId>(t));
    tensors.push_back({.name = std::string(v.name),
                       .dtype = DType::kFloat32,
                       .shape = std::vector<int64_t>(v.shape.begin(),
                                                     v.shape.begin() + v.rank),
                       .data = v.data,
                       .bytes = v.bytes});
  }
  std::vector<uint64_t> ids = std::move(game_ids_);
  ids.resize(size);
  TypedBatch typed(size, std::move(tensors),
                   std::move(*this).ReleaseOwnership());
  typed.set_example_ids(std::move(ids));
  return typed;
}

}  // namespace sluice::lc0
