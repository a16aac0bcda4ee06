// ChannelBase: the type-erased face of Channel<T>.
//
// The factory wires stages through ChannelBase pointers and checks element
// types once, when the pipeline is built (element_type()). Metrics read the
// counters through it. Counters are totals since construction, or since the
// last call that passed reset = true.
#ifndef SLUICE_ENGINE_CHANNEL_BASE_H_
#define SLUICE_ENGINE_CHANNEL_BASE_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <typeindex>

#include "proto/data_loader_metrics.pb.h"

namespace sluice {

// What a full channel does with a new item.
enum class OverflowPolicy {
  kBlock,       // the sender suspends until there is room
  kDropNew,     // the new item is dropped and counted
  kKeepNewest,  // the oldest buffered item is dropped and counted
};

class ChannelBase {
 public:
  ChannelBase(std::string name, size_t capacity, OverflowPolicy policy,
              std::type_index element_type, std::string_view element_name);
  virtual ~ChannelBase() = default;
  ChannelBase(const ChannelBase&) = delete;
  ChannelBase& operator=(const ChannelBase&) = delete;

  const std::string& name() const { return name_; }
  size_t capacity() const { return capacity_.load(std::memory_order_relaxed); }
  // Changes the capacity (at least 1) while the channel is in use (the
  // autotuner): a raise lets suspended senders in at once; a cut drops
  // nothing, sends just suspend until the buffer is below it.
  virtual void SetCapacity(size_t capacity) = 0;
  OverflowPolicy policy() const { return policy_; }
  std::type_index element_type() const { return element_type_; }
  std::string_view element_type_name() const { return element_name_; }

  // Items buffered now.
  virtual size_t Size() const = 0;
  // True once Close() or Cancel() was called.
  virtual bool IsClosed() const = 0;
  // Graceful close: buffered items still drain to receivers, who then see
  // end-of-stream; suspended and later senders fail. Idempotent.
  virtual void Close() = 0;
  // Abort: drops buffered items and wakes every waiter (receivers see
  // end-of-stream, senders fail). Idempotent.
  virtual void Cancel() = 0;

  // What a type-erased blocking take ended with.
  enum class TakeResult { kItem, kEndOfStream, kTimeout };
  // Blocks the calling thread (never an executor thread) for up to
  // `timeout` until an item arrives, which it drops, or the stream ends.
  // For consumers that only count items (the CLI, benchmarks).
  virtual TakeResult TakeAndDiscard(std::chrono::nanoseconds timeout) = 0;

  // Every accepted Send (including those dropped by the overflow policy).
  uint64_t GetTotalPutCount(bool reset = false);
  // Every item handed to a receiver.
  uint64_t GetTotalGetCount(bool reset = false);
  // Every item dropped by the overflow policy.
  uint64_t GetTotalDropCount(bool reset = false);

  // Times a sender suspended because the channel was full, and a receiver
  // because it was empty, since construction (never reset; the autotuner
  // reads them: a channel where both happen often is too small).
  uint64_t send_waits() const {
    return send_waits_.load(std::memory_order_relaxed);
  }
  uint64_t receive_waits() const {
    return receive_waits_.load(std::memory_order_relaxed);
  }

  // Items handed to receivers since construction (never reset).
  virtual uint64_t TotalReceived() const = 0;

  // Size, capacity, closed and the counters; resets the counters when asked.
  QueueMetricProto Metrics(bool reset_counters);

  // A consumer that gathers the rows of its items into groups of a fixed
  // size (a batcher of blocks: its batch size) states that size here when
  // it is built; a producer of blocks of rows may then cut its blocks to
  // fit (0: none stated). Read by the producer when it starts.
  void set_preferred_group_rows(uint64_t rows) {
    preferred_group_rows_.store(rows, std::memory_order_relaxed);
  }
  uint64_t preferred_group_rows() const {
    return preferred_group_rows_.load(std::memory_order_relaxed);
  }

 protected:
  std::atomic<uint64_t> put_count_{0};
  std::atomic<uint64_t> get_count_{0};
  std::atomic<uint64_t> drop_count_{0};
  std::atomic<uint64_t> send_waits_{0};
  std::atomic<uint64_t> receive_waits_{0};
  std::atomic<size_t> capacity_;

 private:
  std::atomic<uint64_t> preferred_group_rows_{0};
  const std::string name_;
  const OverflowPolicy policy_;
  const std::type_index element_type_;
  const std::string_view element_name_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_CHANNEL_BASE_H_
