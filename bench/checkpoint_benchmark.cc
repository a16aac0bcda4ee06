// checkpoint_benchmark: what a checkpoint of the lc0 training pipeline
// costs and how fast a resume reaches its first batch.
//
//   build/bench/checkpoint_benchmark [--games N] [--rounds N] [--threads N]
//                                    [--elastic 1] [--pipeline lc0|audio]
//
// Run from the repository (it reads proto/examples/lc0_train.textproto).
// The data set is generated once into /tmp/sluice_lc0_bench_<N> (default
// 20,000 games: 200 tars of 100). The training pipeline runs in
// deterministic mode with its sampler's min_fill raised to its
// reservoir_size (200,000), so that output starts with the reservoir full.
// After 20 batches, --rounds checkpoints are taken, each between two
// batches (its time and size printed). Then, per round, a new loader
// resumes from one of them: the time from building it to its first batch,
// and a check that the next 10 batches equal those the first run yielded
// after that checkpoint.
//
// --elastic 1: instead, ranks 0 and 1 of a 2-rank run each take 20
// batches and checkpoint; then, interleaved per round, a rank resumes from
// both checkpoints on 2 ranks (its own, a same-size resume) and on 3 ranks
// (an elastic resume: rank `round mod 3` of 3), each timed from building
// the loader to its first batch.
//
// --pipeline audio (with --elastic 1): the same elastic comparison on the
// audio training pipeline (stages/audio/default_pipeline.h, deterministic)
// over the audio benchmark's 2000 generated clips
// (/tmp/sluice_audio_bench_2000, as audio_pipeline_benchmark writes them).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/audio_bench_data.h"
#include "bench/lc0_bench_support.h"
#include "engine/data_loader.h"
#include "engine/stable_hash.h"
#include "engine/typed_batch.h"
#include "stages/audio/default_pipeline.h"
#include "stages/stage_factory.h"

namespace sluice::lc0 {
namespace {

using bench::Clock;
using bench::Seconds;

uint64_t Hash(const TypedBatch& batch) {
  uint64_t hash = 0;
  for (const BatchTensor& tensor : batch.tensors()) {
    hash = HashCombine(
        hash, Fnv1a64(std::string_view(
                  reinterpret_cast<const char*>(tensor.data), tensor.bytes)));
  }
  return hash;
}

std::vector<uint64_t> Take(DataLoader& loader, int count) {
  std::vector<uint64_t> hashes;
  for (int i = 0; i < count; ++i) {
    std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>();
    if (!batch) bench::Die("the pipeline ended");
    hashes.push_back(Hash(*batch));
  }
  return hashes;
}

struct Saved {
  std::string bytes;
  double seconds;
  std::vector<uint64_t> next;  // the 10 batches that followed it
};

// A loader of `config` as rank `rank` of `world_size`, resumed from
// `checkpoints`: the seconds from building it to its first batch.
double ResumeToFirstBatch(DataLoaderConfig config, uint32_t rank,
                          uint32_t world_size,
                          const std::vector<std::string>& checkpoints) {
  config.set_rank(rank);
  config.set_world_size(world_size);
  const auto start = Clock::now();
  DataLoader loader(CreateStage);
  loader.Configure(config);
  loader.Resume(checkpoints);
  loader.Start();
  Take(loader, 1);
  return Seconds(Clock::now() - start);
}

// --elastic: 2 ranks' checkpoints resumed on 2 and on 3 ranks.
void CompareElasticResume(const DataLoaderConfig& config, int rounds) {
  std::vector<std::string> checkpoints;
  for (uint32_t rank = 0; rank < 2; ++rank) {
    DataLoaderConfig ranked = config;
    ranked.set_rank(rank);
    ranked.set_world_size(2);
    DataLoader loader(CreateStage);
    loader.Configure(ranked);
    loader.Start();
    Take(loader, 20);
    checkpoints.push_back(loader.Checkpoint());
    std::printf("rank %u of 2: checkpoint of %.2f MB after 20 batches\n", rank,
                checkpoints.back().size() / 1e6);
  }
  std::vector<double> same, elastic;
  for (int round = 0; round < rounds; ++round) {
    same.push_back(ResumeToFirstBatch(config, round % 2, 2, checkpoints));
    elastic.push_back(ResumeToFirstBatch(config, round % 3, 3, checkpoints));
    std::printf(
        "round %d: first batch after %.2f s on 2 ranks (rank %d), %.2f s on "
        "3 ranks (rank %d): %.2fx\n",
        round + 1, same.back(), round % 2, elastic.back(), round % 3,
        elastic.back() / same.back());
  }
  std::sort(same.begin(), same.end());
  std::sort(elastic.begin(), elastic.end());
  std::printf(
      "2 -> 3 ranks: first batch after %.2f-%.2f s (median %.2f); 2 -> 2: "
      "%.2f-%.2f s (median %.2f); ratio of medians %.2fx\n",
      elastic.front(), elastic.back(), elastic[elastic.size() / 2],
      same.front(), same.back(), same[same.size() / 2],
      elastic[elastic.size() / 2] / same[same.size() / 2]);
}

// The audio training pipeline in deterministic mode over the audio
// benchmark's clips (written once).
DataLoaderConfig AudioTrainConfig(unsigned threads) {
  audio_bench::Options options;
  options.dir = "/tmp/sluice_audio_bench_" + std::to_string(options.clips);
  const std::vector<std::string> files = audio_bench::EnsureData(options);
  absl::StatusOr<DataLoaderConfig> config =
      audio::MakePipeline({.directories = {audio_bench::ArrowDir(options)},
                           .mode = audio::PipelineMode::kTrain,
                           .worker_threads = threads,
                           .deterministic = true});
  if (!config.ok()) bench::Die(std::string(config.status().message()));
  std::printf("%zu Arrow files, %lld clips, %u threads, deterministic\n",
              files.size(), static_cast<long long>(options.clips), threads);
  return *config;
}

int Main(int argc, char** argv) {
  bench::SetProgramName("checkpoint_benchmark");
  int games = 20000;
  int rounds = 5;
  unsigned threads = 2;
  bool elastic = false;
  std::string pipeline = "lc0";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--pipeline" && (std::string(argv[i + 1]) == "lc0" ||
                                 std::string(argv[i + 1]) == "audio")) {
      pipeline = argv[i + 1];
    } else if (flag == "--games") {
      games = value;
    } else if (flag == "--rounds") {
      rounds = std::max(1, value);
    } else if (flag == "--threads") {
      threads = std::max(1, value);
    } else if (flag == "--elastic") {
      elastic = value != 0;
    } else {
      bench::Die("unknown flag " + flag);
    }
  }
  if (pipeline == "audio") {
    if (!elastic) bench::Die("--pipeline audio needs --elastic 1");
    CompareElasticResume(AudioTrainConfig(threads), rounds);
    return 0;
  }
  const std::string dir = "/tmp/sluice_lc0_bench_" + std::to_string(games);
  const size_t tars = bench::EnsureData(dir, games).size();
  DataLoaderConfig config = bench::TrainConfig(dir, threads, true);
  for (StageConfig& stage : *config.mutable_stage()) {
    if (stage.has_shuffling_frame_sampler()) {
      auto& sampler = *stage.mutable_shuffling_frame_sampler();
      sampler.set_min_fill(sampler.reservoir_size());
    }
  }
  std::printf("%zu tars, reservoir %zu frames, %u threads, deterministic\n",
              tars, bench::ReservoirSize(config), threads);
  if (elastic) {
    CompareElasticResume(config, rounds);
    return 0;
  }

  std::vector<Saved> saved;
  {
    DataLoader loader(CreateStage);
    loader.Configure(config);
    const auto start = Clock::now();
    loader.Start();
    Take(loader, 1);
    std::printf("fresh start: first batch after %.2f s\n",
                Seconds(Clock::now() - start));
    Take(loader, 19);
    for (int round = 0; round < rounds; ++round) {
      const auto before = Clock::now();
      std::string bytes = loader.Checkpoint();
      const double seconds = Seconds(Clock::now() - before);
      saved.push_back({std::move(bytes), seconds, Take(loader, 10)});
      std::printf("checkpoint %d: %.1f ms, %.2f MB\n", round + 1, 1e3 * seconds,
                  saved.back().bytes.size() / 1e6);
    }
  }
  for (int round = 0; round < rounds; ++round) {
    const auto start = Clock::now();
    DataLoader loader(CreateStage);
    loader.Configure(config);
    loader.Resume(saved[round].bytes);
    loader.Start();
    std::vector<uint64_t> next = Take(loader, 1);
    const double first = Seconds(Clock::now() - start);
    std::vector<uint64_t> rest = Take(loader, 9);
    next.insert(next.end(), rest.begin(), rest.end());
    std::printf("resume %d: first batch after %.2f s; next 10 batches %s\n",
                round + 1, first,
                next == saved[round].next ? "equal" : "DIFFERENT");
  }
  return 0;
}

}  // namespace
}  // namespace sluice::lc0

int main(int argc, char** argv) { return sluice::lc0::Main(argc, argv); }
