#include "tests/reliability/data_set.h"

#include <unistd.h>

#include <fstream>
#include <string_view>

#include "gtest/gtest.h"
#include "stages/lc0/format/record_upconvert.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/lc0/format/tensor_expansion.h"
#include "tests/stages/lc0/frame_test_util.h"

namespace sluice::lc0::testing {

DataSet WriteDataSet(uint64_t seed, const OutputOptions& output) {
  const GeneratorOptions options{.seed = seed, .version = 6, .input_format = 1};
  absl::StatusOr<GeneratedFiles> files = WriteGames(options, output);
  EXPECT_TRUE(files.ok()) << files.status();
  DataSet set;
  if (!files.ok()) return set;
  set.paths = files->paths;
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(1);
  absl::StatusOr<TensorExpander> expander = TensorExpander::Create(1);
  EXPECT_TRUE(batch.ok() && expander.ok());
  const int games_per_file =
      output.mode == OutputMode::kTar ? output.games_per_tar : 1;
  for (int i = 0; i < output.games; ++i) {
    const std::string& path = set.paths[i / games_per_file];
    absl::StatusOr<std::string> raw =
        GenerateGame(options, output.first_game + i);
    EXPECT_TRUE(raw.ok());
    for (size_t off = 0; off < raw->size(); off += kV6RecordSize) {
      V6TrainingRecord record;
      UpconvertToV6(std::string_view(*raw).substr(off, kV6RecordSize),
                    RecordVersion::kV6, &record);
      expander->Expand(record, &*batch, 0);
      const uint64_t hash = PositionHash(*batch, 0);
      ++set.by_file[path][hash];
      ++set.all[hash];
      ++set.positions;
    }
  }
  return set;
}

void AddCounts(const HashCounts& more, HashCounts* into) {
  for (const auto& [hash, count] : more) (*into)[hash] += count;
}

size_t CountPositions(DataLoader& loader, const std::string& alias,
                      HashCounts* counts) {
  size_t batches = 0;
  while (std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>(alias)) {
    ++batches;
    for (size_t slot = 0; slot < batch->size(); ++slot) {
      ++(*counts)[PositionHash(*batch, slot)];
    }
  }
  return batches;
}

DataLoaderConfig SmallTrainConfig(const std::string& dir, int batch_size) {
  DataLoaderConfig config = ExampleConfig("lc0_train", dir);
  config.set_worker_threads(2);
  config.set_metrics_interval_seconds(0.05);
  for (StageConfig& stage : *config.mutable_stage()) {
    if (stage.has_shuffling_frame_sampler()) {
      stage.mutable_shuffling_frame_sampler()->set_reservoir_size(
          ::sluice::testing::UnlessSanitizer(4000, 1600));
      stage.mutable_shuffling_frame_sampler()->set_min_fill(
          ::sluice::testing::UnlessSanitizer(1000, 400));
    }
    if (stage.has_tensor_generator()) {
      stage.mutable_tensor_generator()->set_batch_size(batch_size);
    }
  }
  return config;
}

uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t total_pages = 0, resident_pages = 0;
  statm >> total_pages >> resident_pages;
  return resident_pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace sluice::lc0::testing
