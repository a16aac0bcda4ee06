// DataLoader: the C++ facade of a pipeline, with the seed's interface:
// AddStage / AddStages take serialized protos, GetNext blocks and returns
// items, errors are exceptions (converted from Status in one place).
//
//   DataLoader loader(CreateStage);           // stages/stage_factory.h
//   loader.AddStages(config.SerializeAsString());
//   loader.Start();
//   while (std::optional<uint64_t> item = loader.GetNext<uint64_t>()) ...
//   loader.Stop();                            // or let the destructor do it
//
// Errors: ConfigError (a std::invalid_argument) for a bad config, naming the
// stage and the field; PipelineError (a std::runtime_error) when a stage
// failed while running, carrying its message. End of stream is not an
// error: GetNext returns std::nullopt.
// Threading: configure, Start and Stop from one thread; GetNext, metrics and
// control from any threads that are not executor threads (several threads
// calling GetNext get disjoint items).
#ifndef SLUICE_ENGINE_DATA_LOADER_H_
#define SLUICE_ENGINE_DATA_LOADER_H_

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "engine/errors.h"
#include "engine/pipeline.h"

namespace sluice {

// Throws ConfigError for InvalidArgument / NotFound / FailedPrecondition,
// PipelineError for anything else that is not OK.
void ThrowIfError(const absl::Status& status);

class DataLoader {
 public:
  explicit DataLoader(StageFactory factory);
  ~DataLoader();

  // Adds one stage from a serialized StageConfig.
  void AddStage(std::string_view serialized_stage_config);
  // Adds every stage, output and option of a serialized DataLoaderConfig.
  void AddStages(std::string_view serialized_data_loader_config);
  void Configure(const DataLoaderConfig& config);

  void Start();
  // Idempotent; the destructor calls it.
  void Stop();

  // Blocks until the next item of output `alias`; std::nullopt at end of
  // stream. Throws PipelineError if the pipeline failed.
  template <typename T>
  std::optional<T> GetNext(std::string_view alias = "") {
    while (true) {
      auto result = GetNextFor<T>(alias, std::chrono::milliseconds(100));
      if (result.kind != Channel<T>::GetResult::Kind::kTimeout) {
        return std::move(result.item);
      }
    }
  }

  // Like GetNext but gives up after `timeout` (kind kTimeout).
  template <typename T>
  typename Channel<T>::GetResult GetNextFor(std::string_view alias,
                                            std::chrono::nanoseconds timeout) {
    auto result = pipeline_.GetNextFor<T>(alias, timeout);
    ThrowIfError(result.status());
    return std::move(*result);
  }

  // The checkpoint bytes of the running pipeline, between two batches
  // (Pipeline::Checkpoint); throws ConfigError when it cannot take one.
  std::string Checkpoint();
  // Before Start(): continue from checkpoint bytes; throws ConfigError for
  // damaged bytes, another config or a pipeline that cannot resume.
  void Resume(std::string_view checkpoint);
  // Before Start(): continue from the checkpoints of every rank of a run,
  // on this pipeline's rank and world_size (Pipeline::Resume: the same
  // number of ranks, or another one); throws ConfigError as above and when
  // they are not every rank's of one run.
  void Resume(const std::vector<std::string>& checkpoints);

  DataLoaderMetricsProto GetMetrics() { return pipeline_.GetMetrics(); }
  std::vector<StageControlResponse> SendControlMessage(
      const StageControlRequest& request);
  // Serialized StageControlRequest in, serialized non-empty responses out.
  std::vector<std::string> SendControlMessage(
      std::string_view serialized_request);

  Pipeline& pipeline() { return pipeline_; }

 private:
  Pipeline pipeline_;
};

}  // namespace sluice

#endif  // SLUICE_ENGINE_DATA_LOADER_H_
