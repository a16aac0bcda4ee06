// Batcher's block input (batcher.h): views of the batches that lie in one
// block, copies of the rest, and on a resume with block_order VIEWS_FIRST
// the held rows put back in their slots.
#include <algorithm>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "engine/log.h"
#include "engine/yield.h"
#include "stages/generic/batcher.h"

namespace sluice {

asio::awaitable<void> Batcher::RunBlocks() {
  std::optional<TypedBatch> open;
  size_t filled = 0;
  // Checkpoints: the input so far (before this run's stream until a block
  // of it comes), and the rows of the open batch (block_order VIEWS_FIRST).
  BatchEnd taken;
  HeldRows held;
  std::optional<ExampleBlock> block;
  if (!resume_held_.empty()) {
    if (!co_await RestoreHeldRows(open, filled, held, block)) co_return;
  } else {
    block = co_await block_input_->Receive(load_meter());
  }
  for (; block.has_value();
       block = co_await block_input_->Receive(load_meter())) {
    const int64_t rows = block->rows();
    if (rows <= 0) continue;
    const uint64_t taken_before = taken.taken;
    // Where the input stands once row `row` of the block is taken in.
    const auto end_at = [&](int64_t row) {
      return BatchEnd{.taken = taken_before + static_cast<uint64_t>(row) + 1,
                      .last = block->OriginOfRow(row).cursor};
    };
    taken = end_at(rows - 1);
    if (!MatchBlock(*block)) continue;
    for (int64_t row = 0; row < rows;) {
      const bool view_fits = rows - row >= static_cast<int64_t>(batch_size_);
      if (view_fits && (!open || views_first_)) {
        const int64_t first = row;
        row += static_cast<int64_t>(batch_size_);
        BatchEnd end = end_at(row - 1);
        if (held != nullptr) {  // VIEWS_FIRST: the open batch's rows
          end.held_rows = held;
          end.held = filled;
        }
        LogBatchEnd(end);
        if (!co_await Emit(ViewOf(*block, first))) co_return;
      } else {
        if (!open) open = NewBatch();
        const size_t run = std::min<size_t>(batch_size_ - filled,
                                            static_cast<size_t>(rows - row));
        CopyRows(*open, filled, block_sources_, row, run);
        filled += run;
        if (filled < batch_size_ && views_first_) {
          HoldRows(*block, row, run, held);
        }
        row += static_cast<int64_t>(run);
        if (filled < batch_size_) continue;
        TypedBatch full = std::move(*open);
        open.reset();
        held.reset();
        filled = 0;
        LogBatchEnd(end_at(row - 1));
        if (!co_await Emit(std::move(full))) co_return;
      }
      if (output_->IsClosed()) co_return;  // cancelled by Stop()
      // About one batch of work per slice: let other coroutines run.
      co_await YieldToOtherCoroutines();
    }
  }
  co_await EmitPartial(std::move(open), filled, taken);
}

asio::awaitable<bool> Batcher::RestoreHeldRows(
    std::optional<TypedBatch>& open, size_t& filled, HeldRows& held,
    std::optional<ExampleBlock>& next) {
  // Each held row's places in resume_held_ (one, unless a state names a row
  // twice), and the rows as they come back, staged field by field there.
  std::map<ItemRef, std::vector<size_t>> places;
  for (size_t place = 0; place < resume_held_.size(); ++place) {
    places[resume_held_[place]].push_back(place);
  }
  std::vector<std::vector<std::byte>> staged(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) {
    staged[i].resize(resume_held_.size() * specs_[i].ExampleBytes());
  }
  std::vector<bool> found(resume_held_.size(), false);
  while (true) {
    next = co_await block_input_->Receive(load_meter());
    if (!next && output_->IsClosed()) co_return false;  // stopped
    if (!next || !next->origin().restored) break;
    if (next->rows() <= 0 || !MatchBlock(*next)) continue;
    for (int64_t row = 0; row < next->rows(); ++row) {
      const auto it = places.find(next->OriginOfRow(row).ref);
      if (it == places.end()) continue;
      for (const size_t place : it->second) {
        for (size_t i = 0; i < specs_.size(); ++i) {
          const size_t bytes = specs_[i].ExampleBytes();
          std::memcpy(staged[i].data() + place * bytes,
                      block_sources_[i]->data + row * bytes, bytes);
        }
        found[place] = true;
      }
    }
  }
  std::vector<size_t> order;  // the places found, in the saved order
  for (size_t place = 0; place < found.size(); ++place) {
    if (found[place]) order.push_back(place);
  }
  if (const size_t missing = resume_held_.size() - order.size(); missing > 0) {
    CountSkip("checkpoint_example_missing", missing);
    LogWarning("stage '", name(), "': resume: ", missing,
               " rows of the batch being filled could not be read again "
               "(their files are gone or changed); going on without them");
  }
  // The rows held from slot k of `order` on, by reference.
  const auto held_from = [&](size_t k) {
    auto rows = std::make_shared<std::vector<ItemRef>>();
    rows->reserve(std::max(order.size() - k, batch_size_));
    for (; k < order.size(); ++k) rows->push_back(resume_held_[order[k]]);
    return rows;
  };
  for (size_t k = 0; k < order.size(); ++k) {
    if (!open) open = NewBatch();
    for (size_t i = 0; i < specs_.size(); ++i) {
      const size_t bytes = specs_[i].ExampleBytes();
      std::memcpy(
          static_cast<std::byte*>(open->tensor(i).data) + filled * bytes,
          staged[i].data() + order[k] * bytes, bytes);
    }
    if (++filled < batch_size_) continue;
    // More held rows than a batch (an elastic resume): the rows after
    // this batch's stay held, the input still before its stream.
    TypedBatch full = std::move(*open);
    open.reset();
    filled = 0;
    HeldRows rest = held_from(k + 1);
    LogBatchEnd({.held_rows = rest, .held = rest->size()});
    if (!co_await Emit(std::move(full))) co_return false;
  }
  if (filled > 0) held = held_from(order.size() - filled);
  co_return !output_->IsClosed();
}

void Batcher::CopyRows(const TypedBatch& batch, size_t slot,
                       const std::vector<const BlockColumn*>& columns,
                       int64_t row, size_t count) const {
  for (size_t i = 0; i < specs_.size(); ++i) {
    const size_t bytes = specs_[i].ExampleBytes();
    std::memcpy(static_cast<std::byte*>(batch.tensor(i).data) + slot * bytes,
                columns[i]->data + row * bytes, count * bytes);
  }
}

TypedBatch Batcher::ViewOf(const ExampleBlock& block, int64_t first) const {
  std::vector<BatchTensor> tensors;
  tensors.reserve(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) {
    const BatchTensorSpec& spec = specs_[i];
    const size_t bytes = spec.ExampleBytes();
    std::vector<int64_t> shape = {static_cast<int64_t>(batch_size_)};
    shape.insert(shape.end(), spec.example_shape.begin(),
                 spec.example_shape.end());
    // The batch's consumers read its tensors; none writes into a view.
    tensors.push_back(BatchTensor{
        .name = spec.name,
        .dtype = spec.dtype,
        .shape = std::move(shape),
        .data = const_cast<std::byte*>(block_sources_[i]->data + first * bytes),
        .bytes = batch_size_ * bytes});
  }
  return TypedBatch(batch_size_, std::move(tensors),
                    std::const_pointer_cast<void>(block.keep_alive()));
}

}  // namespace sluice
