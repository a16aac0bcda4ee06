// Pipeline's trace (DataLoaderConfig.trace): registering the stages,
// channels and outputs with the recorder, sampling channel fills while the
// pipeline runs and writing the file when it stops.
#include <utility>
#include <vector>

#include "engine/log.h"
#include "engine/pipeline.h"

namespace sluice {

void Pipeline::StartTrace() {
  for (uint32_t i = 0; i < stages_.size(); ++i) {
    Stage& stage = *stages_[i];
    const uint32_t track = trace_->AddStage(stage.name(), stage.type());
    stage.TraceInto(trace_.get(), track);
    for (const std::string& name : stage.OutputNames()) {
      ChannelBase* channel = stage.GetOutput(name);
      traced_channels_.emplace_back(
          channel, trace_->AddChannel(track, name, channel->capacity()));
    }
  }
  for (const Output& output : outputs_) trace_->AddOutput(output.alias);
  handed_out_ = std::make_unique<std::atomic<uint64_t>[]>(outputs_.size());
  executor_->file_reader().SetObserver(trace_.get());
  trace_->Begin(started_at_);
}

asio::awaitable<void> Pipeline::TraceFillLoop() {
  // The last fill recorded per channel: a counter is recorded when it moves.
  std::vector<int64_t> last(traced_channels_.size(), -1);
  do {
    const auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < traced_channels_.size(); ++i) {
      const auto& [channel, track] = traced_channels_[i];
      const auto size = static_cast<int64_t>(channel->Size());
      if (size == last[i]) continue;
      last[i] = size;
      trace_->RecordFill(track, now, static_cast<uint64_t>(size));
    }
  } while (co_await abort_.SleepFor(trace_->counter_interval()));
}

void Pipeline::WriteTrace() {
  if (trace_ == nullptr || trace_written_) return;
  trace_written_ = true;
  executor_->file_reader().SetObserver(nullptr);
  absl::Status written = trace_->WriteFile();
  if (!written.ok()) {
    written = absl::Status(
        written.code(),
        absl::StrCat("DataLoaderConfig: field 'trace.file': ",
                     "cannot write the trace: ", written.message()));
    LogError(written.message());
  } else if (trace_->dropped() > 0) {
    LogWarning("trace: ", trace_->dropped(),
               " events were left out (trace.max_events is ",
               options_.trace().max_events(), ")");
  }
  std::lock_guard lock(trace_mu_);
  trace_status_ = std::move(written);
}

absl::Status Pipeline::trace_status() const {
  std::lock_guard lock(trace_mu_);
  return trace_status_;
}

}  // namespace sluice
