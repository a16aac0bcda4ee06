// Channel<T>: a bounded multi-producer multi-consumer channel for coroutines
// on the executor, with a blocking Get for threads outside it.
//
//   Channel<Frame> frames("output", /*capacity=*/64, OverflowPolicy::kBlock);
//   // producer coroutine
//   if (!co_await frames.Send(std::move(frame))) co_return;  // closed
//   frames.Close();
//   // consumer coroutine
//   while (std::optional<Frame> frame = co_await frames.Receive()) { ... }
//   // a trainer thread
//   Channel<Frame>::GetResult got = frames.Get(std::chrono::milliseconds(100));
//
// Promises:
// - FIFO per producer; every accepted item is received exactly once, unless
//   the overflow policy drops it (counted) or Cancel() discards it.
// - Send suspends only when the channel is full and the policy is kBlock.
//   It returns true once the item is accepted (or dropped by the policy), and
//   false when the channel is closed or cancelled (the item is discarded).
// - Receive suspends only while the channel is empty and open. It returns the
//   next item, or std::nullopt once the channel is closed and drained, or
//   cancelled. Close() lets buffered items drain (unlike asio 1.22's
//   channel::close(), which discards them).
// - A suspended Send or Receive resumes on the executor of the coroutine that
//   awaited it (io::PostCompletion), never inline inside another coroutine.
// - There is no per-operation cancellation: Cancel() is the abort, and wakes
//   every waiter at once.
// - The optional LoadMeter is told when the caller suspends and resumes.
// - ReceiveNumbered (and ReceiveSome's `first_position`) also tell each
//   item's place in the channel's stream: the number of items received from
//   the channel before it, whatever the receiving coroutine or thread. A
//   stage whose parallel workers receive numbered items can hand their
//   results on in input order (engine/ordered_output.h).
#ifndef SLUICE_ENGINE_CHANNEL_H_
#define SLUICE_ENGINE_CHANNEL_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <typeindex>
#include <utility>
#include <vector>

#include "asio/async_result.hpp"
#include "asio/awaitable.hpp"
#include "asio/use_awaitable.hpp"
#include "engine/adaptive_mutex.h"
#include "engine/channel_base.h"
#include "engine/element_type.h"
#include "engine/load_meter.h"
#include "engine/ring_queue.h"
#include "io/post_completion.h"

namespace sluice {

// An item with its place in a channel's stream (see ReceiveNumbered).
template <typename T>
struct Numbered {
  uint64_t position = 0;  // items received from the channel before this one
  T item;
};

template <typename T>
class Channel final : public ChannelBase {
 public:
  // What a blocking Get ended with.
  struct GetResult {
    enum class Kind { kItem, kEndOfStream, kTimeout };
    Kind kind;
    std::optional<T> item;  // set when kind == kItem
  };

  // `capacity` must be at least 1.
  Channel(std::string name, size_t capacity,
          OverflowPolicy policy = OverflowPolicy::kBlock)
      : ChannelBase(std::move(name), capacity, policy, typeid(T),
                    ElementTypeName<T>()) {}

  ~Channel() override {
    // Waiters left here belong to coroutines that never resumed (their
    // executor is gone); deleting them destroys those coroutine frames.
    for (ReceiveWaiter* waiter : receivers_) delete waiter;
    for (SendWaiter* waiter : senders_) delete waiter;
  }

  // Sends `item`; see the file comment for when it suspends and what it
  // returns.
  asio::awaitable<bool> Send(T item, LoadMeter* meter = nullptr) {
    if (std::optional<bool> done = TrySendImpl(item)) co_return *done;
    ScopedWait wait(meter);
    co_return co_await asio::async_initiate<decltype(asio::use_awaitable),
                                            void(bool)>(
        [this, &item](auto handler) {
          this->InitiateSend(std::move(item), std::move(handler));
        },
        asio::use_awaitable);
  }

  // Receives the next item, or std::nullopt at end of stream.
  asio::awaitable<std::optional<T>> Receive(LoadMeter* meter = nullptr) {
    std::optional<Numbered<T>> item;
    if (!TryReceiveImpl(item)) {
      ScopedWait wait(meter);
      item = co_await AwaitItem();
    }
    if (!item) co_return std::nullopt;
    co_return std::move(item->item);
  }

  // Receive, with the item's place in the stream.
  asio::awaitable<std::optional<Numbered<T>>> ReceiveNumbered(
      LoadMeter* meter = nullptr) {
    std::optional<Numbered<T>> item;
    if (TryReceiveImpl(item)) co_return item;
    ScopedWait wait(meter);
    co_return co_await AwaitItem();
  }

  // Receives up to `max` (at least 1) items, appended to `items`: whatever
  // is buffered, or, when the channel is empty and open, the next item after
  // suspending for it. Returns false, appending nothing, at end of stream.
  // One lock for many items, for consumers that take items in bulk. The
  // items taken are consecutive in the stream; `first_position`, when
  // given, is set to the place of the first.
  asio::awaitable<bool> ReceiveSome(std::vector<T>& items, size_t max,
                                    LoadMeter* meter = nullptr,
                                    uint64_t* first_position = nullptr) {
    if (PopUpTo(items, max, first_position) > 0) co_return true;
    std::optional<Numbered<T>> first = co_await ReceiveNumbered(meter);
    if (!first) co_return false;
    if (first_position != nullptr) *first_position = first->position;
    items.push_back(std::move(first->item));
    // Items taken now follow the first only if no other receiver took one
    // in between: bulk numbered receivers must be the channel's only ones.
    PopUpTo(items, max - 1, nullptr);
    co_return true;
  }

  // Never suspends: true if accepted (or dropped by the policy); false if
  // closed or full under kBlock, in which case `item` is left untouched.
  bool TrySend(T& item) { return TrySendImpl(item).value_or(false); }

  // Never suspends: sends the leading items of `items` while the channel
  // takes them (one lock for many; a waiting receiver is handed its item as
  // by TrySend) and returns how many it took; those are moved from, the
  // rest left untouched. Stops at the first refusal: closed, or full under
  // kBlock.
  size_t TrySendSome(std::span<T> items) {
    size_t sent = 0;
    std::unique_lock lock(mu_);
    while (sent < items.size()) {
      if (!lock.owns_lock()) lock.lock();  // a receiver was handed an item
      const std::optional<bool> done = SendLocked(items[sent], lock);
      if (!done.value_or(false)) break;
      ++sent;
    }
    return sent;
  }

  // Sends every item of `items` in order (moved from): as many at once as
  // fit under one lock (TrySendSome), suspending only when the channel is
  // full. False once the channel is closed or cancelled; items not sent by
  // then are left as they were.
  asio::awaitable<bool> SendAll(std::span<T> items,
                                LoadMeter* meter = nullptr) {
    // A local copy: GCC 12 coroutines must not reassign a parameter.
    std::span<T> unsent = items;
    while (!unsent.empty()) {
      unsent = unsent.subspan(TrySendSome(unsent));
      if (unsent.empty()) break;
      if (!co_await Send(std::move(unsent.front()), meter)) co_return false;
      unsent = unsent.subspan(1);
    }
    co_return true;
  }

  // Never suspends: the next buffered item, if any.
  std::optional<T> TryReceive() {
    std::optional<Numbered<T>> item;
    TryReceiveImpl(item);
    if (!item) return std::nullopt;
    return std::move(item->item);
  }

  // Blocks the calling thread (never an executor thread) until an item
  // arrives, the stream ends, or `timeout` passes.
  GetResult Get(std::chrono::nanoseconds timeout) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    const Clock::time_point deadline = start + timeout;
    std::unique_lock lock(mu_);
    bool slept = false;
    bool cpu_wanted = false;
    while (true) {
      if (!buffer_.empty()) {
        if (slept) AdaptGetSpinLocked(Clock::now() - start);
        Numbered<T> item = PopLocked(lock);
        return GetResult{GetResult::Kind::kItem, std::move(item.item)};
      }
      if (closed_) return GetResult{GetResult::Kind::kEndOfStream, {}};
      const Clock::time_point now = Clock::now();
      if (!slept && !cpu_wanted && now - start < get_spin_ && now < deadline) {
        // A producer is often about to send: yielding the CPU for a while
        // is much cheaper than a futex sleep, and spares the producer the
        // futex wake-up. A yield that took long, though, means another
        // thread wants this CPU (a busy worker shares it): spinning on
        // would halve its time, and the scheduler (EEVDF) pushes a
        // yielder back by a whole slice, so the item would wait
        // milliseconds. Then this Get sleeps instead.
        lock.unlock();
        std::this_thread::yield();
        lock.lock();
        cpu_wanted = Clock::now() - now > kYieldGaveTheCpuAway;
        continue;
      }
      if (!slept) receive_waits_.fetch_add(1, std::memory_order_relaxed);
      slept = true;
      ++blocked_getters_;
      const std::cv_status status = not_empty_.wait_until(lock, deadline);
      --blocked_getters_;
      if (status == std::cv_status::timeout && buffer_.empty() && !closed_) {
        return GetResult{GetResult::Kind::kTimeout, {}};
      }
    }
  }

  TakeResult TakeAndDiscard(std::chrono::nanoseconds timeout) override {
    switch (Get(timeout).kind) {
      case GetResult::Kind::kItem:
        return TakeResult::kItem;
      case GetResult::Kind::kEndOfStream:
        return TakeResult::kEndOfStream;
      case GetResult::Kind::kTimeout:
        break;
    }
    return TakeResult::kTimeout;
  }

  size_t Size() const override {
    std::lock_guard lock(mu_);
    return buffer_.size();
  }

  // How many items sends would hand on now without suspending or dropping:
  // suspended receivers plus free places (none once closed, or while
  // senders wait). Only grows until the next send when the caller is the
  // channel's only sender.
  size_t Room() const {
    std::lock_guard lock(mu_);
    if (closed_ || !senders_.empty()) return 0;
    return receivers_.size() +
           (capacity() - std::min(capacity(), buffer_.size()));
  }

  uint64_t TotalReceived() const override {
    std::lock_guard lock(mu_);
    return taken_;
  }

  bool IsClosed() const override {
    std::lock_guard lock(mu_);
    return closed_;
  }

  void SetCapacity(size_t capacity) override {
    std::vector<SendWaiter*> resume;
    {
      std::lock_guard lock(mu_);
      capacity_.store(std::max<size_t>(capacity, 1), std::memory_order_relaxed);
      while (!senders_.empty() && buffer_.size() < this->capacity()) {
        SendWaiter* sender = senders_.front();
        senders_.pop_front();
        buffer_.push_back(std::move(sender->item));
        put_count_.fetch_add(1, std::memory_order_relaxed);
        resume.push_back(sender);
      }
    }
    ResumeSenders(resume);
  }

  void Close() override { Shut(/*discard_buffer=*/false); }
  void Cancel() override { Shut(/*discard_buffer=*/true); }

 private:
  // Bounds of the time Get spends yielding the CPU before it sleeps on the
  // condition variable.
  static constexpr std::chrono::microseconds kMinGetSpin{20};
  static constexpr std::chrono::microseconds kMaxGetSpin{500};
  // A yield that returns later than this ran another thread meanwhile.
  static constexpr std::chrono::microseconds kYieldGaveTheCpuAway{10};

  // After a Get slept and then got an item `waited` after it began: items
  // that come that soon are worth spinning for (twice as long, so that the
  // next one is caught spinning); items rarer than kMaxGetSpin are not.
  void AdaptGetSpinLocked(std::chrono::steady_clock::duration waited) {
    get_spin_ = waited <= kMaxGetSpin
                    ? std::clamp<std::chrono::steady_clock::duration>(
                          2 * waited, kMinGetSpin, kMaxGetSpin)
                    : std::chrono::steady_clock::duration(kMinGetSpin);
  }

  struct ReceiveWaiter {
    virtual ~ReceiveWaiter() = default;
    // Posts the waiting coroutine's resumption and deletes the waiter.
    virtual void Complete(std::optional<Numbered<T>> item) = 0;
  };
  struct SendWaiter {
    explicit SendWaiter(T value) : item(std::move(value)) {}
    virtual ~SendWaiter() = default;
    // Posts the waiting coroutine's resumption and deletes the waiter.
    virtual void Complete(bool accepted) = 0;
    T item;
  };

  // Suspends until an item or the end of the stream comes.
  auto AwaitItem() {
    return asio::async_initiate<decltype(asio::use_awaitable),
                                void(std::optional<Numbered<T>>)>(
        [this](auto handler) { this->InitiateReceive(std::move(handler)); },
        asio::use_awaitable);
  }

  template <typename Handler>
  struct ReceiveWaiterImpl final : ReceiveWaiter {
    explicit ReceiveWaiterImpl(Handler h) : handler(std::move(h)) {}
    void Complete(std::optional<Numbered<T>> item) override {
      io::PostCompletion(std::move(handler), std::move(item));
      delete this;
    }
    Handler handler;
  };

  template <typename Handler>
  struct SendWaiterImpl final : SendWaiter {
    SendWaiterImpl(T value, Handler h)
        : SendWaiter(std::move(value)), handler(std::move(h)) {}
    void Complete(bool accepted) override {
      io::PostCompletion(std::move(handler), accepted);
      delete this;
    }
    Handler handler;
  };

  // Sends without suspending when possible: returns the result, or nullopt
  // when the caller must wait (full, kBlock). Moves from `item` only when it
  // returns a value.
  std::optional<bool> TrySendImpl(T& item) {
    std::unique_lock lock(mu_);
    return SendLocked(item, lock);
  }

  std::optional<bool> SendLocked(T& item,
                                 std::unique_lock<AdaptiveMutex>& lock) {
    if (closed_) return false;
    put_count_.fetch_add(1, std::memory_order_relaxed);
    if (!receivers_.empty()) {
      ReceiveWaiter* receiver = receivers_.front();
      receivers_.pop_front();
      get_count_.fetch_add(1, std::memory_order_relaxed);
      Numbered<T> numbered{taken_++, std::move(item)};
      lock.unlock();
      receiver->Complete(std::move(numbered));
      return true;
    }
    // Suspended senders go first: a sender arriving while others wait for
    // room waits behind them.
    if (buffer_.size() < capacity() && senders_.empty()) {
      buffer_.push_back(std::move(item));
      if (blocked_getters_ > 0) not_empty_.notify_one();
      return true;
    }
    switch (policy()) {
      case OverflowPolicy::kDropNew:
        drop_count_.fetch_add(1, std::memory_order_relaxed);
        return true;
      case OverflowPolicy::kKeepNewest:
        drop_count_.fetch_add(1, std::memory_order_relaxed);
        buffer_.pop_front();
        buffer_.push_back(std::move(item));
        return true;
      case OverflowPolicy::kBlock:
        break;
    }
    put_count_.fetch_sub(1, std::memory_order_relaxed);
    return std::nullopt;
  }

  template <typename Handler>
  void InitiateSend(T item, Handler handler) {
    std::unique_lock lock(mu_);
    if (std::optional<bool> done = SendLocked(item, lock)) {
      if (lock.owns_lock()) lock.unlock();
      io::PostCompletion(std::move(handler), *done);
      return;
    }
    send_waits_.fetch_add(1, std::memory_order_relaxed);
    senders_.push_back(
        new SendWaiterImpl<Handler>(std::move(item), std::move(handler)));
  }

  // Takes the next item without suspending; false when the caller must wait
  // (empty and open). At end of stream returns true with `item` empty.
  bool TryReceiveImpl(std::optional<Numbered<T>>& item) {
    std::unique_lock lock(mu_);
    if (!buffer_.empty()) {
      item = PopLocked(lock);
      return true;
    }
    return closed_;
  }

  // Moves up to `max` buffered items to `items` (consecutive in the stream;
  // the first one's place in `first_position` when given); returns how
  // many.
  size_t PopUpTo(std::vector<T>& items, size_t max, uint64_t* first_position) {
    std::vector<SendWaiter*> resume;
    size_t taken = 0;
    {
      std::lock_guard lock(mu_);
      if (first_position != nullptr) *first_position = taken_;
      while (taken < max && !buffer_.empty()) {
        items.push_back(PopFrontLocked(resume).item);
        ++taken;
      }
    }
    ResumeSenders(resume);
    return taken;
  }

  template <typename Handler>
  void InitiateReceive(Handler handler) {
    std::unique_lock lock(mu_);
    if (!buffer_.empty() || closed_) {
      std::optional<Numbered<T>> item;
      if (!buffer_.empty()) item = PopLocked(lock);
      if (lock.owns_lock()) lock.unlock();
      io::PostCompletion(std::move(handler), std::move(item));
      return;
    }
    receive_waits_.fetch_add(1, std::memory_order_relaxed);
    receivers_.push_back(new ReceiveWaiterImpl<Handler>(std::move(handler)));
  }

  // Pops the front item (PopFrontLocked), then resumes the senders whose
  // items it took in, after releasing the lock. Needs a non-empty buffer.
  Numbered<T> PopLocked(std::unique_lock<AdaptiveMutex>& lock) {
    std::vector<SendWaiter*> resume;
    Numbered<T> item = PopFrontLocked(resume);
    if (!resume.empty()) {
      lock.unlock();
      ResumeSenders(resume);
    }
    return item;
  }

  // Pops the front item. Once the buffer is down to half its capacity,
  // moves the items of suspended senders in and appends those senders to
  // `resume`, for the caller to resume once it has released the lock:
  // waking senders in batches, not once per item, keeps a full channel from
  // costing a wake-up per item. Needs a non-empty buffer.
  Numbered<T> PopFrontLocked(std::vector<SendWaiter*>& resume) {
    Numbered<T> item{taken_++, std::move(buffer_.front())};
    buffer_.pop_front();
    get_count_.fetch_add(1, std::memory_order_relaxed);
    if (!senders_.empty() && buffer_.size() <= capacity() / 2) {
      while (!senders_.empty() && buffer_.size() < capacity()) {
        SendWaiter* sender = senders_.front();
        senders_.pop_front();
        buffer_.push_back(std::move(sender->item));
        put_count_.fetch_add(1, std::memory_order_relaxed);
        resume.push_back(sender);
      }
    }
    return item;
  }

  static void ResumeSenders(const std::vector<SendWaiter*>& resume) {
    for (SendWaiter* sender : resume) sender->Complete(true);
  }

  void Shut(bool discard_buffer) {
    std::deque<ReceiveWaiter*> receivers;
    std::deque<SendWaiter*> senders;
    {
      std::lock_guard lock(mu_);
      closed_ = true;
      if (discard_buffer) buffer_.clear();
      receivers.swap(receivers_);
      senders.swap(senders_);
      not_empty_.notify_all();
    }
    for (ReceiveWaiter* receiver : receivers) receiver->Complete(std::nullopt);
    for (SendWaiter* sender : senders) sender->Complete(false);
  }

  // Held for a few hundred nanoseconds at a time by threads on different
  // cores: spun for before sleeping (engine/adaptive_mutex.h).
  mutable AdaptiveMutex mu_;
  RingQueue<T> buffer_;  // never frees while items pass (ring_queue.h)
  uint64_t taken_ = 0;   // items received so far: the next one's position
  bool closed_ = false;
  // Invariants: receivers_ is non-empty only while buffer_ is empty;
  // senders_ is non-empty only while buffer_ is more than half full
  // (kBlock).
  std::deque<ReceiveWaiter*> receivers_;
  std::deque<SendWaiter*> senders_;
  std::condition_variable_any not_empty_;
  int blocked_getters_ = 0;
  // How long Get spins before it sleeps; see AdaptGetSpinLocked.
  std::chrono::steady_clock::duration get_spin_ = kMinGetSpin;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_CHANNEL_H_
