// Pipeline's checkpoints: the checkpoint bytes and their digest, taking a
// checkpoint while the pipeline runs and resuming from one (or from every
// rank's of a run on another number of ranks) before Start.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "engine/pipeline.h"
#include "engine/stable_hash.h"
#include "engine/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/message_differencer.h"

namespace sluice {
namespace {

using google::protobuf::FieldDescriptor;

// The LoaderCheckpoint.format this build writes and reads.
constexpr uint32_t kCheckpointFormat = 3;

uint64_t DigestOf(const LoaderCheckpoint& checkpoint) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  checkpoint.SerializeToCodedStream(&coded);
  coded.Trim();
  return Fnv1a64(bytes);
}

// Clears every field of `message` (recursively) whose name ends in
// "parallelism": in deterministic mode they do not change the batches.
void ClearParallelism(google::protobuf::Message& message) {
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (absl::EndsWith(field->name(), "parallelism")) {
      reflection->ClearField(&message, field);
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
          ClearParallelism(
              *reflection->MutableRepeatedMessage(&message, field, i));
        }
      } else {
        ClearParallelism(*reflection->MutableMessage(&message, field));
      }
    }
  }
}

// OK when `checkpoint` is in the format this build reads.
absl::Status CheckFormat(const LoaderCheckpoint& checkpoint) {
  if (checkpoint.format() == kCheckpointFormat) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "resume: the checkpoint is in format ", checkpoint.format(),
      " (written by another sluice version); this build reads format ",
      kCheckpointFormat, " only"));
}

}  // namespace

std::string SerializeCheckpoint(LoaderCheckpoint checkpoint) {
  checkpoint.clear_digest();
  checkpoint.set_digest(DigestOf(checkpoint));
  return checkpoint.SerializeAsString();
}

absl::StatusOr<LoaderCheckpoint> ParseCheckpoint(std::string_view bytes) {
  LoaderCheckpoint checkpoint;
  if (bytes.empty() || !checkpoint.ParseFromArray(
                           bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the checkpoint (", bytes.size(),
        " bytes) does not parse: damaged, truncated or not a checkpoint"));
  }
  const uint64_t digest = checkpoint.digest();
  checkpoint.clear_digest();
  if (digest != DigestOf(checkpoint)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the checkpoint (", bytes.size(),
                     " bytes) fails its digest check: damaged or truncated"));
  }
  return checkpoint;
}

DataLoaderConfig Pipeline::BatchDefiningConfig() const {
  DataLoaderConfig config = options_;
  config.clear_worker_threads();
  config.clear_metrics_interval_seconds();
  config.clear_use_io_uring();
  config.clear_worker_placement();
  config.clear_trace();
  // The planned settings are in the stages' configs.
  config.clear_memory_budget_bytes();
  for (const auto& stage : stage_configs_) *config.add_stage() = *stage;
  for (const std::string& spec : output_specs_) config.add_output(spec);
  ClearParallelism(config);
  return config;
}

absl::StatusOr<LoaderCheckpoint> Pipeline::Checkpoint() {
  if (state_ != State::kRunning) {
    return absl::FailedPreconditionError(
        "checkpoint: the pipeline is not running");
  }
  if (!Resumable()) {
    return absl::FailedPreconditionError(
        "checkpoint: needs DataLoaderConfig.deterministic: true (a resume "
        "gives exactly the batches that would have followed) or resumable: "
        "true (a resume repeats and loses nothing)");
  }
  if (absl::Status failure = status(); !failure.ok()) return failure;
  if (outputs_.size() != 1 || outputs_.front().owner == nullptr) {
    return absl::FailedPreconditionError(
        "checkpoint: needs a pipeline with exactly one output");
  }
  const auto began = std::chrono::steady_clock::now();
  // Stages acknowledging their input on their own would otherwise trim
  // logs that the stages upstream have yet to save.
  const std::unique_lock gate(checkpoint_gate_);
  LoaderCheckpoint checkpoint;
  checkpoint.set_format(kCheckpointFormat);
  *checkpoint.mutable_config() = BatchDefiningConfig();
  checkpoint.set_batches(delivered_.load());
  std::optional<ResumeRequest> request =
      ResumeRequest{.from = checkpoint.batches() - resumed_at_};
  for (Stage* stage = outputs_.front().owner; request.has_value();
       stage = stage->upstream()) {
    if (stage == nullptr) {
      return absl::UnimplementedError(
          "checkpoint: the first stage of the chain needs its input "
          "replayed but has none");
    }
    StageCheckpoint& saved = *checkpoint.add_stage();
    saved.set_name(stage->name());
    SLUICE_ASSIGN_OR_RETURN(
        request, stage->SaveCheckpoint(*request, saved.mutable_state()));
  }
  if (trace_ != nullptr) {
    trace_->RecordCheckpoint(checkpoint.batches(), began,
                             std::chrono::steady_clock::now());
  }
  return checkpoint;
}

absl::Status Pipeline::CheckCanResume() const {
  if (state_ != State::kConfiguring) {
    return absl::FailedPreconditionError(
        "resume: the pipeline is already started; resume before Start()");
  }
  if (!Resumable()) {
    return absl::FailedPreconditionError(
        "resume: needs DataLoaderConfig.deterministic: true or resumable: "
        "true");
  }
  return absl::OkStatus();
}

absl::Status Pipeline::Resume(const LoaderCheckpoint& checkpoint) {
  SLUICE_RETURN_IF_ERROR(CheckCanResume());
  SLUICE_RETURN_IF_ERROR(CheckFormat(checkpoint));
  std::string difference;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&difference);
  if (!differencer.Compare(checkpoint.config(), BatchDefiningConfig())) {
    if (difference.size() > 400) difference.resize(400);
    return absl::InvalidArgumentError(absl::StrCat(
        "resume: the checkpoint was taken with another config (checkpoint "
        "-> this pipeline): ",
        difference));
  }
  for (const StageCheckpoint& saved : checkpoint.stage()) {
    Stage* stage = FindStage(saved.name());
    if (stage == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("resume: the checkpoint names stage '", saved.name(),
                       "', which this pipeline does not have"));
    }
    if (absl::Status restored = stage->RestoreCheckpoint(saved.state());
        !restored.ok()) {
      return absl::Status(restored.code(),
                          absl::StrCat("resume: stage '", saved.name(),
                                       "': ", restored.message()));
    }
  }
  delivered_.store(checkpoint.batches());
  resumed_at_ = checkpoint.batches();
  return absl::OkStatus();
}

absl::Status Pipeline::Resume(
    const std::vector<LoaderCheckpoint>& checkpoints) {
  if (checkpoints.empty()) {
    return absl::InvalidArgumentError("resume: no checkpoint given");
  }
  const auto old_world_size = static_cast<uint32_t>(checkpoints.size());
  std::vector<const LoaderCheckpoint*> by_rank(old_world_size, nullptr);
  DataLoaderConfig expected = BatchDefiningConfig();
  expected.clear_rank();
  expected.clear_world_size();
  for (const LoaderCheckpoint& checkpoint : checkpoints) {
    SLUICE_RETURN_IF_ERROR(CheckFormat(checkpoint));
    const uint32_t rank = checkpoint.config().rank();
    const uint32_t world_size = checkpoint.config().world_size();
    if (world_size != old_world_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "resume: ", old_world_size,
          " checkpoints given, but one was taken by rank ", rank, " of ",
          world_size,
          ": give the checkpoints of every rank of one run, each once"));
    }
    if (rank >= world_size || by_rank[rank] != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "resume: two checkpoints of rank ", rank, " given (of ", world_size,
          " ranks): give the checkpoints of every rank of one run, each "
          "once"));
    }
    by_rank[rank] = &checkpoint;
    DataLoaderConfig taken = checkpoint.config();
    taken.clear_rank();
    taken.clear_world_size();
    std::string difference;
    google::protobuf::util::MessageDifferencer differencer;
    differencer.ReportDifferencesToString(&difference);
    if (!differencer.Compare(taken, expected)) {
      if (difference.size() > 400) difference.resize(400);
      return absl::InvalidArgumentError(absl::StrCat(
          "resume: the checkpoint of rank ", rank, " of ", world_size,
          " was taken with another config (checkpoint -> this pipeline): ",
          difference));
    }
  }
  if (old_world_size == options_.world_size()) {
    return Resume(*by_rank[options_.rank()]);
  }
  std::vector<LoaderCheckpoint> ordered;
  ordered.reserve(old_world_size);
  for (const LoaderCheckpoint* checkpoint : by_rank) {
    ordered.push_back(*checkpoint);
  }
  return ResumeElastic(ordered);
}

absl::Status Pipeline::ResumeElastic(
    const std::vector<LoaderCheckpoint>& checkpoints) {
  SLUICE_RETURN_IF_ERROR(CheckCanResume());
  const LoaderCheckpoint& first = checkpoints.front();
  ElasticResume resume{
      .rank = options_.rank(),
      .world_size = options_.world_size(),
      .old_world_size = static_cast<uint32_t>(checkpoints.size())};
  ElasticRequest request{.skip = std::vector<uint32_t>(checkpoints.size())};
  std::vector<Stage*> planned;
  for (int s = 0; s < first.stage_size(); ++s) {
    const std::string& stage_name = first.stage(s).name();
    Stage* stage = FindStage(stage_name);
    if (stage == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("resume: the checkpoints name stage '", stage_name,
                       "', which this pipeline does not have"));
    }
    std::vector<std::string> states;
    for (const LoaderCheckpoint& checkpoint : checkpoints) {
      if (checkpoint.stage_size() != first.stage_size() ||
          checkpoint.stage(s).name() != stage_name) {
        return absl::InvalidArgumentError(
            "resume: the checkpoints hold the states of different stages: "
            "not the checkpoints of one run");
      }
      states.push_back(checkpoint.stage(s).state());
    }
    absl::StatusOr<std::optional<ElasticRequest>> next =
        stage->PlanElasticResume(states, request, resume);
    if (!next.ok()) {
      return absl::Status(next.status().code(),
                          absl::StrCat("resume: stage '", stage_name,
                                       "': ", next.status().message()));
    }
    planned.push_back(stage);
    if (!next->has_value()) break;
    request = **next;
  }
  if (!resume.translate) {
    resume.translate = [](uint32_t, uint64_t unit) { return unit; };
  }
  for (Stage* stage : planned) {
    if (absl::Status finished = stage->FinishElasticResume(resume);
        !finished.ok()) {
      return absl::Status(finished.code(),
                          absl::StrCat("resume: stage '", stage->name(),
                                       "': ", finished.message()));
    }
  }
  // Data-parallel ranks step together: the step the run had reached.
  uint64_t batches = 0;
  for (const LoaderCheckpoint& checkpoint : checkpoints) {
    batches = std::max(batches, checkpoint.batches());
  }
  delivered_.store(batches);
  resumed_at_ = batches;
  return absl::OkStatus();
}

}  // namespace sluice
