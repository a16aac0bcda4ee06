// sluice::Loader: a data-loading pipeline embedded in a C++ trainer.
//
//   sluice::Loader loader = sluice::Loader::FromConfigFile("train.textproto");
//   loader.Start();
//   while (std::optional<sluice::Batch> batch = loader.Next()) Train(*batch);
//   loader.Stop();
//
// Threading: create, Start and Stop from one controlling thread. Next,
// Metrics and SendControlMessage may be called from any number of other
// threads at once; concurrent Next calls receive disjoint batches. Stop may
// be called while other threads are blocked in Next: they return
// std::nullopt. Never call any of them from a stage (an executor thread).
//
// Lifetime: the destructor stops the pipeline; batches stay valid after it.
//
// Errors: ConfigError (sluice/errors.h) for a bad config, naming the stage
// and the field; PipelineError when the running pipeline failed, with the
// failing stage's message. End of stream is not an error: Next returns
// std::nullopt.
#ifndef SLUICE_SLUICE_LOADER_H_
#define SLUICE_SLUICE_LOADER_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"
#include "proto/stage_control.pb.h"
#include "sluice/batch.h"
#include "sluice/errors.h"

namespace sluice {

class DataLoader;
class TypedBatch;

// What Loader::NextFor ended with: a batch, the end of the stream, or no
// batch within the timeout (the stream goes on).
struct NextResult {
  std::optional<Batch> batch;  // set when a batch came
  bool timed_out = false;      // true only when no batch came in time

  bool end_of_stream() const { return !batch.has_value() && !timed_out; }
};

class Loader {
 public:
  // Builds the pipeline a config describes; throws ConfigError.
  explicit Loader(const DataLoaderConfig& config);
  // From a text-format DataLoaderConfig file; throws ConfigError (also when
  // the file cannot be read or parsed, naming the line).
  static Loader FromConfigFile(const std::string& path);
  // From text-format DataLoaderConfig; throws ConfigError.
  static Loader FromText(std::string_view text);
  // From a serialized DataLoaderConfig; throws ConfigError.
  static Loader FromSerialized(std::string_view bytes);

  Loader(Loader&& other) noexcept;
  Loader& operator=(Loader&& other) noexcept;
  ~Loader();

  // Starts the pipeline's threads and stages; once.
  void Start();
  // Stops everything; idempotent; returns in well under a second.
  void Stop();

  // Blocks until the next batch of output `output` ("" = the first); nullopt
  // at end of stream or after Stop(). Throws PipelineError if the pipeline
  // failed, ConfigError if the output does not carry tensor batches.
  std::optional<Batch> Next(std::string_view output = "");
  // Like Next, but returns after `timeout` at the latest (timed_out set,
  // nothing taken): a trainer's loop can then look at a stop flag, take a
  // Checkpoint (no batch was handed out) and call NextFor again.
  NextResult NextFor(std::chrono::nanoseconds timeout,
                     std::string_view output = "");

  // Checkpoints (deterministic or resumable pipelines; docs/guarantees.md).
  // The state of the running pipeline after the batches handed out so far,
  // as bytes (a LoaderCheckpoint: references, never record data). Throws
  // ConfigError when the pipeline is neither or not running.
  std::string Checkpoint();
  // Before Start(): continue from checkpoint bytes; the batches then are
  // those the checkpointed run would have handed out next (resumable
  // without deterministic: nothing repeated or lost). Throws
  // ConfigError (nothing started) for damaged or foreign bytes, naming the
  // first config difference.
  void ResumeFrom(std::string_view checkpoint);
  // Before Start(): continue from the checkpoints every rank of a
  // data-parallel run took at one step (one per rank, any order), on this
  // loader's rank and world_size, which may differ from that run's: with
  // another number of ranks each new rank takes its share of the old
  // ranks' state alone (docs/guarantees.md, "Elastic resume"). Throws
  // ConfigError as above, and when they are not every rank's of one run.
  void ResumeFrom(const std::vector<std::string>& checkpoints);

  // The latest metrics snapshot (every stage, last interval and totals).
  DataLoaderMetricsProto Metrics();
  // Fans `request` out to every stage; the non-empty answers.
  std::vector<StageControlResponse> SendControlMessage(
      const StageControlRequest& request);

 private:
  // The public view of an engine batch: the same buffer, no copy.
  static Batch ToBatch(const TypedBatch& batch);

  std::unique_ptr<DataLoader> impl_;
};

}  // namespace sluice

#endif  // SLUICE_SLUICE_LOADER_H_
