// DeadlineWatchdog: ends the process, naming what was late, when a scope
// outlives its deadline. A benchmark that measures a reader in-process
// cannot cancel a reader that hangs; without this the whole command would
// wait for ever without a word.
//
//   {
//     const DeadlineWatchdog watchdog("the cold case", absl::Seconds(90));
//     RunTheReader();
//   }  // disarmed here
//
// On expiry it writes "sluice: <what> did not finish within <deadline>;
// stopping" to stderr and exits with status 3 (std::_Exit: the late work
// still runs on its thread, so nothing is torn down under it).
#ifndef SLUICE_BINDINGS_CLI_DEADLINE_WATCHDOG_H_
#define SLUICE_BINDINGS_CLI_DEADLINE_WATCHDOG_H_

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "absl/time/time.h"

namespace sluice::cli {

// The exit status of a process the watchdog ends.
inline constexpr int kDeadlineExitStatus = 3;

class DeadlineWatchdog {
 public:
  DeadlineWatchdog(std::string what, absl::Duration deadline);
  // Disarms the watchdog (returns at once).
  ~DeadlineWatchdog();

  DeadlineWatchdog(const DeadlineWatchdog&) = delete;
  DeadlineWatchdog& operator=(const DeadlineWatchdog&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_DEADLINE_WATCHDOG_H_
