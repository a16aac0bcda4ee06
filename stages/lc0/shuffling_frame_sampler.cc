#include "stages/lc0/shuffling_frame_sampler.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/log.h"
#include "engine/status_macros.h"

namespace sluice::lc0 {

absl::StatusOr<std::unique_ptr<Stage>> ShufflingFrameSampler::Create(
    const StageContext& context) {
  const ShufflingFrameSamplerConfig& config =
      context.config().shuffling_frame_sampler();
  if (config.reservoir_size() == 0) {
    return context.FieldError("reservoir_size", "must be at least 1");
  }
  const uint64_t min_fill =
      config.has_min_fill() ? config.min_fill() : config.reservoir_size();
  if (min_fill > config.reservoir_size()) {
    return context.FieldError(
        "min_fill",
        absl::StrCat("is ", min_fill, " but must be at most reservoir_size (",
                     config.reservoir_size(), ")"));
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<Frame> * input, context.SingleInput<Frame>());
  return std::unique_ptr<Stage>(new ShufflingFrameSampler(
      context, config.reservoir_size(), min_fill, input));
}

ShufflingFrameSampler::ShufflingFrameSampler(const StageContext& context,
                                             uint64_t reservoir_size,
                                             uint64_t min_fill,
                                             Channel<Frame>* input)
    : Stage(context),
      input_(input),
      output_(AddOutput<Frame>("output", 256)),
      shuffler_(reservoir_size, min_fill, ReservoirSeed(context),
                context.deterministic()) {}

void ShufflingFrameSampler::PrepareCheckpoints() {
  shuffler_.EnableJournal(
      [this](uint64_t position) { AcknowledgeUpstream(position); });
}

void ShufflingFrameSampler::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, 1, [this](int) { return Run(); });
}

asio::awaitable<void> ShufflingFrameSampler::Run() {
  if (resume_from_.has_value()) {
    const bool restored = co_await TakeRestoredFrames();
    if (!restored) co_return;
  }
  co_await shuffler_.Run(input_, output_, load_meter());
}

namespace {

std::vector<ItemRef> RefsOf(const FrameRefs& refs) {
  std::vector<ItemRef> out;
  const int count = std::min(refs.chunk_size(), refs.record_size());
  out.reserve(count);
  for (int i = 0; i < count; ++i) {
    out.push_back({.unit = refs.chunk(i), .index = refs.record(i)});
  }
  return out;
}

void AppendRefs(const std::vector<ItemRef>& refs, FrameRefs* out) {
  out->mutable_chunk()->Reserve(static_cast<int>(refs.size()));
  out->mutable_record()->Reserve(static_cast<int>(refs.size()));
  for (const ItemRef& ref : refs) {
    out->add_chunk(ref.unit);
    out->add_record(ref.index);
  }
}

// A copy of `frame` (records are move-only: unpacked and packed again).
Frame CopyFrame(const Frame& frame, V6TrainingRecord* scratch) {
  frame.record.Unpack(scratch);
  Frame copy{.record = PackedRecord::Pack(*scratch)};
  copy.game_id = frame.game_id;
  copy.chunk_number = frame.chunk_number;
  copy.record_index = frame.record_index;
  return copy;
}

// The request for the frames of `saved` and its input's resume point.
ResumeRequest RequestFor(const FrameSamplerCheckpoint& saved, uint64_t from) {
  ResumeRequest request{.from = from,
                        .skip = static_cast<uint32_t>(saved.skip())};
  request.restore = RefsOf(saved.pending());
  std::vector<ItemRef> reservoir = RefsOf(saved.reservoir());
  request.restore.insert(request.restore.end(), reservoir.begin(),
                         reservoir.end());
  return request;
}

}  // namespace

asio::awaitable<bool> ShufflingFrameSampler::TakeRestoredFrames() {
  const FrameSamplerCheckpoint& saved = *resume_from_;
  std::map<ItemRef, Frame> frames;
  while (true) {
    std::optional<Frame> frame = co_await input_->Receive(load_meter());
    if (!frame) co_return false;
    if (frame->chunk_position == Frame::kEndOfRestore) break;
    if (frame->chunk_position != Frame::kRestoredFrame) {
      throw std::runtime_error(
          "a frame of the stream arrived before the end of the restored "
          "frames (the input must keep its order: deterministic or resumable)");
    }
    frames.emplace(CheckpointRef(*frame), *std::move(frame));
  }
  // Each frame goes to every place that names it (copied for the second).
  std::map<ItemRef, uint32_t> uses;
  const std::vector<ItemRef> pending_refs = RefsOf(saved.pending());
  const std::vector<ItemRef> reservoir_refs = RefsOf(saved.reservoir());
  for (const ItemRef& ref : pending_refs) ++uses[ref];
  for (const ItemRef& ref : reservoir_refs) ++uses[ref];
  const auto scratch = std::make_unique_for_overwrite<V6TrainingRecord>();
  uint64_t missing = 0;
  const auto take = [&](const std::vector<ItemRef>& refs) {
    std::vector<Frame> out;
    out.reserve(refs.size());
    for (const ItemRef& ref : refs) {
      auto it = frames.find(ref);
      if (it == frames.end()) {
        ++missing;
        continue;
      }
      if (--uses[ref] == 0) {
        out.push_back(std::move(it->second));
        frames.erase(it);
      } else {
        out.push_back(CopyFrame(it->second, scratch.get()));
      }
    }
    return out;
  };
  std::vector<Frame> pending = take(pending_refs);
  std::vector<Frame> reservoir = take(reservoir_refs);
  if (missing > 0) {
    CountSkip("checkpoint_frame_missing", missing);
    LogWarning("stage ", name(), ": resume: ", missing,
               " frames of the checkpoint could not be read again (their "
               "sources are gone or changed); going on without them");
  }
  shuffler_.Restore(std::move(reservoir), std::move(pending),
                    saved.random_state(), saved.past_min_fill(),
                    static_cast<uint32_t>(saved.skip()));
  restored_.store(true);
  co_return true;
}

void ShufflingFrameSampler::Acknowledge(uint64_t consumed) {
  shuffler_.Acknowledge(consumed);
}

absl::StatusOr<std::optional<ResumeRequest>>
ShufflingFrameSampler::SaveCheckpoint(const ResumeRequest& downstream,
                                      std::string* state) {
  if (!shuffler_.journaled()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "stage '", name(), "' is not on the chain of the pipeline's output"));
  }
  if (!restored_.load()) {
    // Still taking its restored frames: nothing emitted, nothing taken in.
    resume_from_->SerializeToString(state);
    return RequestFor(*resume_from_, 0);
  }
  std::optional<ReservoirCheckpoint> now = shuffler_.Save(downstream.from);
  if (!now) {
    return absl::InternalError(
        absl::StrCat("stage '", name(), "': frame ", downstream.from,
                     " of its output is no longer journaled"));
  }
  FrameSamplerCheckpoint saved;
  AppendRefs(now->pending, saved.mutable_pending());
  AppendRefs(now->reservoir, saved.mutable_reservoir());
  saved.set_random_state(now->random_state);
  saved.set_past_min_fill(now->past_min_fill);
  saved.set_skip(now->skip);
  saved.SerializeToString(state);
  return RequestFor(saved, now->from);
}

absl::Status ShufflingFrameSampler::RestoreCheckpoint(
    const std::string& state) {
  FrameSamplerCheckpoint saved;
  if (!saved.ParseFromString(state) ||
      saved.pending().chunk_size() != saved.pending().record_size() ||
      saved.reservoir().chunk_size() != saved.reservoir().record_size()) {
    return absl::InvalidArgumentError("the sampler's state does not parse");
  }
  if (static_cast<uint64_t>(saved.reservoir().chunk_size()) >
      shuffler_.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the sampler's reservoir holds ", saved.reservoir().chunk_size(),
        " frames, more than its size ", shuffler_.size()));
  }
  resume_from_ = std::move(saved);
  restored_.store(false);
  return absl::OkStatus();
}

void ShufflingFrameSampler::AddMetrics(StageMetricProto& metrics) {
  const ReservoirMetrics reservoir = shuffler_.TakeMetrics();
  ShufflingFrameSamplerMetricsProto* sampler =
      metrics.mutable_shuffling_frame_sampler();
  sampler->set_capacity(reservoir.capacity);
  sampler->set_fill(reservoir.fill);
  sampler->set_frames_received(reservoir.received);
  sampler->set_frames_emitted(reservoir.emitted);
  sampler->set_resident_bytes(reservoir.resident_bytes);
}

}  // namespace sluice::lc0
