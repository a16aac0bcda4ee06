// Ctrl-C and SIGTERM as a stop request the training loop looks at.
//
//   StopSignal::Install();
//   while (!StopSignal::requested()) Step();
//
// The first SIGINT or SIGTERM sets the flag (and nothing else: the handler
// is async-signal-safe); the handler then reverts to the default, so a
// second Ctrl-C ends the process at once.
#ifndef CPP_TRAINER_STOP_SIGNAL_H_
#define CPP_TRAINER_STOP_SIGNAL_H_

#include <atomic>

namespace trainer {

class StopSignal {
 public:
  // Installs the handlers for SIGINT and SIGTERM.
  static void Install();
  // Whether a stop was asked for.
  static bool requested() { return flag_.load(std::memory_order_relaxed); }

 private:
  static void OnSignal(int);
  static std::atomic<bool> flag_;
};

}  // namespace trainer

#endif  // CPP_TRAINER_STOP_SIGNAL_H_
