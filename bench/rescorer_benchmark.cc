// The chunk rescorer's cost: generated games that end in 3-4-piece
// tablebase range (rescorer/endgame_generator.h), rescored
//  1. by GameRescorer alone on one core (passes over the games for two
//     seconds, each game copied into a buffer and rescored there, as the
//     stage rescores gunzip's output): records/s and the share of
//     positions probed (deblunder on, as lc0's runs use it);
//  2. inside the lc0 training pipeline (proto/examples/lc0_train.textproto
//     with a smaller reservoir) on --threads worker threads, with the
//     rescorer stage against without it, interleaved (off, on, off, on,
//     ...): positions/s over --batches batches after the first
//     --warmup-batches, and the ratio of each round.
// Tables: --syzygy (default tests/data/rescorer/tables: run from the
// source root); they are mapped once, shared by every coroutine: the
// memory they take is their file size, in the page cache.
//
//   out/release/bench/rescorer_benchmark --rounds 3
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "bench/lc0_bench_support.h"
#include "engine/data_loader.h"
#include "io/atomic_file.h"
#include "io/recycled_bytes.h"
#include "stages/lc0/chess/syzygy_tablebase.h"
#include "stages/lc0/default_pipeline.h"
#include "stages/lc0/format/data_generator.h"
#include "stages/lc0/rescorer/endgame_generator.h"
#include "stages/lc0/rescorer/game_rescorer.h"
#include "stages/stage_factory.h"

namespace sluice::lc0::bench {
namespace {

struct Options {
  int games = 600;
  int rounds = 3;
  unsigned threads = 2;
  int batches = 60;
  int warmup_batches = 10;
  std::string syzygy = "tests/data/rescorer/tables";
  std::string dir = "/tmp/sluice_rescorer_bench";
};

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    int number = 0;
    const bool numeric = absl::SimpleAtoi(value, &number) && number > 0;
    if (flag == "--games" && numeric) {
      options.games = number;
    } else if (flag == "--rounds" && numeric) {
      options.rounds = number;
    } else if (flag == "--threads" && numeric) {
      options.threads = static_cast<unsigned>(number);
    } else if (flag == "--batches" && numeric) {
      options.batches = number;
    } else if (flag == "--warmup-batches" && numeric) {
      options.warmup_batches = number;
    } else if (flag == "--syzygy") {
      options.syzygy = value;
    } else if (flag == "--dir") {
      options.dir = value;
    } else {
      Die("usage: rescorer_benchmark [--games N] [--rounds R] [--threads T] "
          "[--batches B] [--warmup-batches W] [--syzygy DIR] [--dir DIR]");
    }
  }
  return options;
}

// Writes the games (once) and returns them decompressed.
std::vector<std::string> MakeGames(const Options& options) {
  std::vector<std::string> games;
  std::filesystem::create_directories(options.dir);
  for (int i = 0; i < options.games; ++i) {
    games.push_back(rescorer::GenerateEndgameGame(i));
    const std::string name = absl::StrFormat("training.%06d.gz", i);
    if (std::filesystem::exists(std::filesystem::path(options.dir) / name)) {
      continue;
    }
    absl::StatusOr<std::string> gzip = GzipChunk(games.back());
    if (!gzip.ok() || !WriteFileAtomically(options.dir, name, *gzip).ok()) {
      Die("cannot write " + name);
    }
  }
  return games;
}

// Positions/s of the training pipeline over `dir`, with or without the
// rescorer, measured over options.batches batches after the warm-up.
double PipelineRate(const Options& options, bool rescore) {
  DataLoaderConfig config = TrainConfig(options.dir, options.threads);
  for (StageConfig& stage : *config.mutable_stage()) {
    if (stage.has_shuffling_frame_sampler()) {
      stage.mutable_shuffling_frame_sampler()->set_reservoir_size(20000);
      stage.mutable_shuffling_frame_sampler()->set_min_fill(10000);
    }
  }
  if (rescore) {
    ChunkRescorerConfig rescorer;
    rescorer.add_syzygy_paths(options.syzygy);
    rescorer.mutable_deblunder()->set_threshold(0.1f);
    rescorer.mutable_deblunder()->set_width(0.03f);
    rescorer.set_parallelism(2);
    InsertRescorer(rescorer, config);
  }
  DataLoader loader(CreateStage);
  loader.Configure(config);
  loader.Start();
  Clock::time_point start;
  uint64_t positions = 0;
  for (int b = 0; b < options.warmup_batches + options.batches; ++b) {
    std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>();
    if (!batch) Die("the pipeline ended early");
    if (b == options.warmup_batches) start = Clock::now();
    if (b >= options.warmup_batches) positions += batch->size();
  }
  const double seconds = Seconds(Clock::now() - start);
  loader.Stop();
  return positions / seconds;
}

}  // namespace
}  // namespace sluice::lc0::bench

int main(int argc, char** argv) {
  using namespace sluice::lc0;
  using namespace sluice::lc0::bench;
  SetProgramName("rescorer_benchmark");
  const Options options = ParseOptions(argc, argv);
  auto tables = chess::SyzygyTablebase::Load({options.syzygy});
  if (!tables.ok()) Die(std::string(tables.status().message()));
  const std::vector<std::string> games = MakeGames(options);

  // 1. One core, GameRescorer alone.
  const rescorer::GameRescorer rescorer(*tables, {.deblunder = true,
                                                  .deblunder_threshold = 0.1f,
                                                  .deblunder_width = 0.03f});
  // Passes over the games until two seconds have gone by; the counts are
  // those of the first pass.
  rescorer::RescoreCounts counts;
  uint64_t refused = 0;
  uint64_t records = 0;
  const Clock::time_point start = Clock::now();
  for (int pass = 0; pass == 0 || Seconds(Clock::now() - start) < 2; ++pass) {
    rescorer::RescoreCounts pass_counts;
    for (const std::string& game : games) {
      // As the stage: the game's bytes in a buffer (there, gunzip's
      // output), rescored where they lie.
      sluice::io::RecycledBytes bytes{std::string_view(game)};
      const bool refused_game =
          rescorer.RescoreInPlace(&bytes, &pass_counts).has_value();
      if (pass == 0) refused += refused_game;
    }
    if (pass == 0) counts = pass_counts;
    records += pass_counts.positions;
  }
  const double seconds = Seconds(Clock::now() - start);
  const double records_per_second = records / seconds;
  const double probed_share =
      static_cast<double>(counts.positions_probed) / counts.positions;
  std::printf(
      "games %d (%llu refused), records %llu, probed %.1f %%, results "
      "changed %llu, blunders %llu\n",
      options.games, static_cast<unsigned long long>(refused),
      static_cast<unsigned long long>(counts.positions), 100 * probed_share,
      static_cast<unsigned long long>(counts.results_changed),
      static_cast<unsigned long long>(counts.blunders));
  std::printf("rescorer alone, one core: %.0f records/s (%.1f us/record)\n",
              records_per_second, 1e6 / records_per_second);
  std::printf("tables: %d WDL + %d DTZ files, %.1f MB mapped (shared)\n",
              (*tables)->wdl_tables(), (*tables)->dtz_tables(),
              (*tables)->mapped_bytes() / 1e6);

  // 2. The training pipeline, rescorer off and on, interleaved.
  std::printf("\ntraining pipeline, %u threads, positions/s:\n",
              options.threads);
  std::printf("%6s %12s %12s %8s\n", "round", "off", "on", "on/off");
  std::vector<double> ratios;
  std::vector<double> off_rates;
  std::vector<double> on_rates;
  for (int round = 0; round < options.rounds; ++round) {
    const double off = PipelineRate(options, false);
    const double on = PipelineRate(options, true);
    off_rates.push_back(off);
    on_rates.push_back(on);
    ratios.push_back(on / off);
    std::printf("%6d %12.0f %12.0f %7.1f%%\n", round + 1, off, on,
                100 * on / off);
  }
  std::sort(ratios.begin(), ratios.end());
  const double median = ratios[ratios.size() / 2];
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  std::printf("on/off: %.1f%% to %.1f%%, median %.1f%%; peak RSS %.0f MB\n",
              100 * ratios.front(), 100 * ratios.back(), 100 * median,
              usage.ru_maxrss / 1024.0);
  std::printf(
      "{\"benchmark\":\"rescorer\",\"records_per_second_one_core\":%.0f,"
      "\"probed_share\":%.4f,\"threads\":%u,\"on_off_ratio_min\":%.4f,"
      "\"on_off_ratio_median\":%.4f,\"on_off_ratio_max\":%.4f,"
      "\"table_bytes\":%llu}\n",
      records_per_second, probed_share, options.threads, ratios.front(), median,
      ratios.back(),
      static_cast<unsigned long long>((*tables)->mapped_bytes()));
  return 0;
}
