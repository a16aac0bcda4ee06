// AdaptiveMutex: a mutex for short critical sections that threads on
// different cores take in turn (a channel's buffer and waiters). A thread
// that finds it held spins for a short while before it sleeps, since the
// holder is running and about to release it; std::mutex sleeps at once (a
// futex wait, then a futex wake and an inter-processor interrupt from the
// holder, which cost far more than the critical section). It is glibc's
// adaptive mutex (PTHREAD_MUTEX_ADAPTIVE_NP), a plain pthread mutex where
// that is missing. Lockable: use it with std::lock_guard, std::unique_lock
// and std::condition_variable_any.
//
//   AdaptiveMutex mu;
//   std::lock_guard lock(mu);
//
// Measured on the 2-core VM (lc0 training pipeline, contention_benchmark
// `alone`): the workers' voluntary context switches fell from 220-760 to
// 20-110 per 1000 batches, most of them sleeps on a contended channel.
#ifndef SLUICE_ENGINE_ADAPTIVE_MUTEX_H_
#define SLUICE_ENGINE_ADAPTIVE_MUTEX_H_

#include <pthread.h>

#include <system_error>

namespace sluice {

class AdaptiveMutex {
 public:
  AdaptiveMutex() = default;
  ~AdaptiveMutex() { pthread_mutex_destroy(&mutex_); }
  AdaptiveMutex(const AdaptiveMutex&) = delete;
  AdaptiveMutex& operator=(const AdaptiveMutex&) = delete;

  // Blocks until the calling thread holds the mutex (spinning first).
  void lock() {
    if (const int error = pthread_mutex_lock(&mutex_); error != 0) {
      throw std::system_error(error, std::system_category(), "mutex lock");
    }
  }
  // Takes the mutex if it is free; never waits.
  bool try_lock() { return pthread_mutex_trylock(&mutex_) == 0; }
  // Releases the mutex, held by the calling thread.
  void unlock() { pthread_mutex_unlock(&mutex_); }

 private:
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
  pthread_mutex_t mutex_ = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
#else
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
#endif
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_ADAPTIVE_MUTEX_H_
