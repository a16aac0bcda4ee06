#include "bench/lc0_bench_support.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>

#include "google/protobuf/text_format.h"
#include "io/tar_index.h"
#include "stages/lc0/format/data_generator.h"
#include "stages/lc0/format/packed_expander.h"
#include "stages/lc0/format/packed_record.h"
#include "stages/lc0/format/policy_entries.h"
#include "stages/lc0/format/tensor_expansion.h"

namespace sluice::lc0::bench {
namespace {

std::string& ProgramName() {
  static std::string name = "benchmark";
  return name;
}

}  // namespace

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

void SetProgramName(const std::string& name) { ProgramName() = name; }

void Die(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", ProgramName().c_str(), message.c_str());
  std::exit(1);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::vector<std::string> EnsureData(const std::string& dir, int games) {
  const std::string marker = dir + "/.complete";
  if (!std::filesystem::exists(marker)) {
    std::filesystem::remove_all(dir);
    std::printf("generating %d games into %s ...\n", games, dir.c_str());
    absl::StatusOr<GeneratedFiles> files = WriteGames(
        {.seed = 1, .version = 6, .input_format = 1}, {.mode = OutputMode::kTar,
                                                       .dir = dir,
                                                       .games = games,
                                                       .games_per_tar = 100});
    if (!files.ok()) Die(files.status().ToString());
    std::ofstream(marker) << games << "\n";
  }
  std::vector<std::string> tars;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".tar") tars.push_back(entry.path());
  }
  std::sort(tars.begin(), tars.end());
  return tars;
}

std::vector<std::string> ReadChunks(const std::vector<std::string>& tars) {
  std::vector<std::string> chunks;
  for (const std::string& path : tars) {
    const std::string bytes = ReadFile(path);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    absl::StatusOr<io::TarIndex> index = io::IndexTarFile(fd, bytes.size());
    ::close(fd);
    if (!index.ok()) Die(index.status().ToString());
    for (const io::TarMember& member : index->members) {
      chunks.push_back(bytes.substr(member.data_offset, member.size));
    }
  }
  return chunks;
}

TensorBatch PrefaultedBatch() {
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(kBatchSize);
  if (!batch.ok()) Die("cannot allocate a batch");
  // The planes come first in the allocation.
  std::memset(batch->planes(0), 0, batch->allocation_bytes());
  return *std::move(batch);
}

namespace {

PackedExpander FormatOneExpander() {
  absl::StatusOr<TensorExpander> expander = TensorExpander::Create(1);
  if (!expander.ok()) Die("cannot set up the stage-work run");
  return PackedExpander(*expander);
}

}  // namespace

StageWorker::StageWorker(size_t window_frames)
    : window_frames_(window_frames),
      batch_(PrefaultedBatch()),
      expander_(FormatOneExpander()),
      upconverted_(std::make_unique_for_overwrite<V6TrainingRecord>()) {
  window_.reserve(window_frames);
}

uint64_t StageWorker::Run(
    const std::function<const std::string*()>& next_chunk) {
  uint64_t positions = 0;
  while (const std::string* chunk = next_chunk()) {
    positions += ForEachRecordOf(
        *chunk, raw_, upconverted_.get(),
        [&](const V6TrainingRecord& record, RecordVersion version) {
          const PolicyEntries entries = PolicyEntries::Find(record);
          if (CheckRecord(record, entries, version, 1)) return;
          window_.push_back(PackedRecord::Pack(record, entries));
          if (window_.size() == window_frames_) ExpandWindow();
        });
  }
  ExpandWindow();
  return positions;
}

void StageWorker::ExpandWindow() {
  std::shuffle(window_.begin(), window_.end(), random_);
  for (size_t k = 0; k < window_.size(); ++k) {
    if (k + 1 < window_.size()) window_[k + 1].Prefetch();
    expander_.Expand(window_[k], &batch_, slot_);
    slot_ = (slot_ + 1) % kBatchSize;
  }
  window_.clear();
}

double StageWorkOnce(const std::vector<std::string>& chunks,
                     size_t window_frames) {
  StageWorker worker(window_frames);
  size_t next = 0;
  const auto start = Clock::now();
  const uint64_t positions = worker.Run([&]() -> const std::string* {
    return next < chunks.size() ? &chunks[next++] : nullptr;
  });
  return positions / Seconds(Clock::now() - start);
}

DataLoaderConfig TrainConfig(const std::string& dir, unsigned threads,
                             bool deterministic) {
  DataLoaderConfig config;
  const std::string text = ReadFile("proto/examples/lc0_train.textproto");
  if (text.empty() ||
      !google::protobuf::TextFormat::ParseFromString(text, &config)) {
    Die("cannot read proto/examples/lc0_train.textproto (run from the repo)");
  }
  for (StageConfig& stage : *config.mutable_stage()) {
    if (!stage.has_file_path_provider()) continue;
    stage.mutable_file_path_provider()->clear_directory();
    stage.mutable_file_path_provider()->add_directory(dir);
  }
  config.set_worker_threads(threads);
  config.set_deterministic(deterministic);
  return config;
}

size_t ReservoirSize(const DataLoaderConfig& config) {
  for (const StageConfig& stage : config.stage()) {
    if (stage.has_shuffling_frame_sampler()) {
      return stage.shuffling_frame_sampler().reservoir_size();
    }
  }
  Die("the training pipeline has no shuffling_frame_sampler");
}

}  // namespace sluice::lc0::bench
