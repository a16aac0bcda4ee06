// BatchFeed: a loader's batches for a training loop, with the time spent
// waiting for each and a prompt stop.
//
//   BatchFeed feed(loader);
//   while (std::optional<sluice::Batch> batch = feed.Next()) {
//     Train(*batch);                          // feed.last_wait_seconds()
//   }                                         // end of stream, or a stop
//
// Next waits in slices of kStopPollInterval and gives up when StopSignal
// is requested: a stop is seen within that interval, and no batch is taken
// then, so a loader Checkpoint() right after covers exactly the batches
// Next returned.
#ifndef CPP_TRAINER_BATCH_FEED_H_
#define CPP_TRAINER_BATCH_FEED_H_

#include <chrono>
#include <optional>

#include "sluice/sluice.h"

namespace trainer {

class BatchFeed {
 public:
  static constexpr std::chrono::milliseconds kStopPollInterval{20};

  explicit BatchFeed(sluice::Loader& loader) : loader_(loader) {}

  // The next batch; nullopt at end of stream or once a stop is requested.
  std::optional<sluice::Batch> Next();
  // The next batch without consuming it (the following Next returns it);
  // nullptr at end of stream or on a stop. While a batch is held, the
  // loader has handed it out: take no Checkpoint() before Next.
  const sluice::Batch* Peek();
  // Seconds the last Next waited (for a peeked batch: Peek's wait).
  double last_wait_seconds() const { return last_wait_seconds_; }

 private:
  std::optional<sluice::Batch> Wait();

  sluice::Loader& loader_;
  std::optional<sluice::Batch> held_;
  double held_wait_seconds_ = 0;
  double last_wait_seconds_ = 0;
};

}  // namespace trainer

#endif  // CPP_TRAINER_BATCH_FEED_H_
