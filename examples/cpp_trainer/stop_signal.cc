#include "stop_signal.h"

#include <signal.h>

namespace trainer {

std::atomic<bool> StopSignal::flag_{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void StopSignal::OnSignal(int) { flag_.store(true); }

void StopSignal::Install() {
  struct sigaction action = {};
  action.sa_handler = &StopSignal::OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // the second signal takes the default
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

}  // namespace trainer
