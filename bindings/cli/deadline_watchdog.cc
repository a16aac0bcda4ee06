#include "bindings/cli/deadline_watchdog.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace sluice::cli {

DeadlineWatchdog::DeadlineWatchdog(std::string what, absl::Duration deadline)
    : thread_([this, what = std::move(what), deadline] {
        std::unique_lock lock(mu_);
        if (done_changed_.wait_for(lock, absl::ToChronoNanoseconds(deadline),
                                   [this] { return done_; })) {
          return;
        }
        std::fprintf(stderr, "sluice: %s did not finish within %s; stopping\n",
                     what.c_str(), absl::FormatDuration(deadline).c_str());
        std::fflush(stdout);
        std::fflush(stderr);
        std::_Exit(kDeadlineExitStatus);
      }) {}

DeadlineWatchdog::~DeadlineWatchdog() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  done_changed_.notify_one();
  thread_.join();
}

}  // namespace sluice::cli
