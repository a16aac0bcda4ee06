#include "stages/generic/shuffle_buffer.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/log.h"
#include "engine/status_macros.h"

namespace sluice {

absl::StatusOr<std::unique_ptr<Stage>> ShuffleBuffer::Create(
    const StageContext& context) {
  const ShuffleBufferConfig& config = context.config().shuffle_buffer();
  if (config.size() == 0) {
    return context.FieldError("size", "must be at least 1");
  }
  const uint64_t min_fill =
      config.has_min_fill() ? config.min_fill() : config.size();
  if (min_fill > config.size()) {
    return context.FieldError(
        "min_fill", absl::StrCat("is ", min_fill, " but must be at most size (",
                                 config.size(), ")"));
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<Example> * input,
                          context.SingleInput<Example>());
  return std::unique_ptr<Stage>(
      new ShuffleBuffer(context, config.size(), min_fill, input));
}

ShuffleBuffer::ShuffleBuffer(const StageContext& context, uint64_t size,
                             uint64_t min_fill, Channel<Example>* input)
    : Stage(context),
      input_(input),
      output_(AddOutput<Example>("output", 256)),
      shuffler_(size, min_fill, ReservoirSeed(context),
                context.deterministic()) {}

void ShuffleBuffer::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, 1, [this](int) { return Run(); });
}

asio::awaitable<void> ShuffleBuffer::Run() {
  if (resume_from_.has_value()) {
    const bool restored = co_await TakeRestoredExamples();
    if (!restored) co_return;
  }
  co_await shuffler_.Run(input_, output_, load_meter());
}

namespace {

std::vector<ItemRef> RefsOf(const ItemRefs& refs) {
  std::vector<ItemRef> out;
  const int count = std::min(refs.unit_size(), refs.index_size());
  out.reserve(count);
  for (int i = 0; i < count; ++i) {
    out.push_back({.unit = refs.unit(i), .index = refs.index(i)});
  }
  return out;
}

void AppendRefs(const std::vector<ItemRef>& refs, ItemRefs* out) {
  out->mutable_unit()->Reserve(static_cast<int>(refs.size()));
  out->mutable_index()->Reserve(static_cast<int>(refs.size()));
  for (const ItemRef& ref : refs) {
    out->add_unit(ref.unit);
    out->add_index(ref.index);
  }
}

// The request for the examples of `saved` and its input's resume point.
ResumeRequest RequestFor(const ShuffleBufferCheckpoint& saved, uint64_t from) {
  ResumeRequest request{.from = from,
                        .skip = static_cast<uint32_t>(saved.skip())};
  request.restore = RefsOf(saved.pending());
  std::vector<ItemRef> reservoir = RefsOf(saved.reservoir());
  request.restore.insert(request.restore.end(), reservoir.begin(),
                         reservoir.end());
  return request;
}

}  // namespace

asio::awaitable<bool> ShuffleBuffer::TakeRestoredExamples() {
  const ShuffleBufferCheckpoint& saved = *resume_from_;
  std::map<ItemRef, Example> examples;
  while (true) {
    std::optional<Example> example = co_await input_->Receive(load_meter());
    if (!example && output_->IsClosed()) co_return false;  // stopped
    if (!example) break;  // a stream that ends with the restore
    if (!example->origin().restored) {
      shuffler_.PutBack(*std::move(example));
      break;
    }
    const ItemRef ref = CheckpointRef(*example);
    examples.emplace(ref, *std::move(example));
  }
  uint64_t missing = 0;
  const auto take = [&](const std::vector<ItemRef>& refs) {
    std::vector<Example> out;
    out.reserve(refs.size());
    for (const ItemRef& ref : refs) {
      auto it = examples.find(ref);
      if (it == examples.end()) {
        ++missing;
        continue;
      }
      out.push_back(it->second);  // copies share the views
    }
    return out;
  };
  std::vector<Example> pending = take(RefsOf(saved.pending()));
  std::vector<Example> reservoir = take(RefsOf(saved.reservoir()));
  if (missing > 0) {
    CountSkip("checkpoint_example_missing", missing);
    LogWarning("stage ", name(), ": resume: ", missing,
               " examples of the checkpoint could not be read again (their "
               "files are gone or changed); going on without them");
  }
  shuffler_.Restore(std::move(reservoir), std::move(pending),
                    saved.random_state(), saved.past_min_fill(),
                    static_cast<uint32_t>(saved.skip()));
  restored_.store(true);
  co_return !output_->IsClosed();
}

void ShuffleBuffer::PrepareCheckpoints() {
  shuffler_.EnableJournal(
      [this](uint64_t position) { AcknowledgeUpstream(position); });
}

void ShuffleBuffer::Acknowledge(uint64_t consumed) {
  shuffler_.Acknowledge(consumed);
}

absl::StatusOr<std::optional<ResumeRequest>> ShuffleBuffer::SaveCheckpoint(
    const ResumeRequest& downstream, std::string* state) {
  if (!shuffler_.journaled()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "stage '", name(), "' is not on the chain of the pipeline's output"));
  }
  if (!restored_.load()) {
    // Still taking its restored examples: nothing emitted, nothing taken.
    resume_from_->SerializeToString(state);
    return RequestFor(*resume_from_, 0);
  }
  std::optional<ReservoirCheckpoint> now = shuffler_.Save(downstream.from);
  if (!now) {
    return absl::InternalError(
        absl::StrCat("stage '", name(), "': example ", downstream.from,
                     " of its output is no longer journaled"));
  }
  ShuffleBufferCheckpoint saved;
  AppendRefs(now->pending, saved.mutable_pending());
  AppendRefs(now->reservoir, saved.mutable_reservoir());
  saved.set_random_state(now->random_state);
  saved.set_past_min_fill(now->past_min_fill);
  saved.set_skip(now->skip);
  saved.SerializeToString(state);
  return RequestFor(saved, now->from);
}

absl::Status ShuffleBuffer::RestoreCheckpoint(const std::string& state) {
  ShuffleBufferCheckpoint saved;
  if (!saved.ParseFromString(state) ||
      saved.pending().unit_size() != saved.pending().index_size() ||
      saved.reservoir().unit_size() != saved.reservoir().index_size()) {
    return absl::InvalidArgumentError(
        "the shuffle buffer's state does not parse");
  }
  if (static_cast<uint64_t>(saved.reservoir().unit_size()) > shuffler_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the shuffle buffer holds ", saved.reservoir().unit_size(),
                     " examples, more than its size ", shuffler_.size()));
  }
  resume_from_ = std::move(saved);
  restored_.store(false);
  return absl::OkStatus();
}

void ShuffleBuffer::AddMetrics(StageMetricProto& metrics) {
  const ReservoirMetrics reservoir = shuffler_.TakeMetrics();
  ShuffleBufferMetricsProto* shuffle = metrics.mutable_shuffle_buffer();
  shuffle->set_capacity(reservoir.capacity);
  shuffle->set_fill(reservoir.fill);
  shuffle->set_examples_received(reservoir.received);
  shuffle->set_examples_emitted(reservoir.emitted);
}

}  // namespace sluice
