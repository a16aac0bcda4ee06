// RingQueue<T>: a first-in first-out queue in one circular array that
// grows (doubling) as needed and never shrinks or frees while it lives.
// std::deque allocates and frees a block every few hundred bytes of items
// as they pass; in a channel the producer's thread allocated those blocks
// and the consumer's freed them, one cross-thread free() every ~10 items
// under the channel's lock, which contended for the producer's malloc
// arena (the lc0 workers slept on that arena's lock). Not thread-safe: the
// owner locks.
//
//   RingQueue<Frame> queue;
//   queue.push_back(std::move(frame));
//   Frame next = std::move(queue.front());
//   queue.pop_front();
#ifndef SLUICE_ENGINE_RING_QUEUE_H_
#define SLUICE_ENGINE_RING_QUEUE_H_

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace sluice {

template <typename T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // The oldest item; the queue must not be empty.
  T& front() { return *slots_[head_]; }

  // Appends `item` after the newest one, growing the array when full.
  void push_back(T item) {
    if (size_ == slots_.size()) Grow();
    slots_[(head_ + size_) & (slots_.size() - 1)].emplace(std::move(item));
    ++size_;
  }

  // Destroys the oldest item; the queue must not be empty.
  void pop_front() {
    slots_[head_].reset();
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }

  // Destroys every item; keeps the array.
  void clear() {
    while (!empty()) pop_front();
  }

 private:
  static constexpr size_t kFirstSlots = 8;  // then doubling: a power of two

  void Grow() {
    std::vector<std::optional<T>> bigger(slots_.empty() ? kFirstSlots
                                                        : 2 * slots_.size());
    for (size_t i = 0; i < size_; ++i) {
      bigger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    }
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<std::optional<T>> slots_;  // size 0 or a power of two
  size_t head_ = 0;                      // the oldest item's slot
  size_t size_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_RING_QUEUE_H_
