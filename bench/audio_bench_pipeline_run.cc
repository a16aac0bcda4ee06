// Audio pipeline runs in a forked child and their memory estimate
// (audio_bench_pipeline_run.h).
#include "bench/audio_bench_pipeline_run.h"

#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "engine/data_loader.h"
#include "engine/typed_batch.h"
#include "stages/audio/default_pipeline.h"
#include "stages/stage_factory.h"

namespace sluice::audio_bench {
namespace {

double StatusKib(const char* key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key, 0) == 0) return std::atof(line.c_str() + strlen(key));
  }
  return 0;
}

double CpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

std::string Serialize(const RunResult& r) {
  std::string s = absl::StrFormat(
      "seconds %.9g\nfirst %.9g\nclips %.9g\nskipped %.9g\ncpu %.9g\nbase "
      "%.9g\npeak %.9g\nfill %.9g\nsize %.9g\nbatchbytes %.9g\nreadahead "
      "%.9g\ndecpar %.9g\nmbase %.9g\nmpeak %.9g\n",
      r.seconds, r.first_batch_seconds, r.clips, r.skipped, r.cpu_busy,
      r.base_rss_mib, r.peak_rss_mib, r.max_shuffle_fill, r.shuffle_size,
      r.max_batch_buffer_bytes, r.readahead, r.decoder_parallelism,
      r.base_malloc_mib, r.peak_malloc_mib);
  for (const auto& [k, v] : r.capacity)
    s += absl::StrFormat("cap.%s %.9g\n", k, v);
  for (const auto& [k, v] : r.load)
    s += absl::StrFormat("load.%s %.9g\n", k, v);
  for (const auto& [k, v] : r.max_queue) {
    s += absl::StrFormat("qmax.%s %.9g\n", k, v);
  }
  if (!r.error.empty()) s += "error " + r.error + "\n";
  return s;
}

RunResult Deserialize(const std::string& text) {
  RunResult r;
  std::map<std::string, double*> fields = {
      {"seconds", &r.seconds},       {"first", &r.first_batch_seconds},
      {"clips", &r.clips},           {"skipped", &r.skipped},
      {"cpu", &r.cpu_busy},          {"base", &r.base_rss_mib},
      {"peak", &r.peak_rss_mib},     {"fill", &r.max_shuffle_fill},
      {"size", &r.shuffle_size},     {"batchbytes", &r.max_batch_buffer_bytes},
      {"readahead", &r.readahead},   {"decpar", &r.decoder_parallelism},
      {"mbase", &r.base_malloc_mib}, {"mpeak", &r.peak_malloc_mib}};
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t space = line.find(' ');
    if (space == absl::string_view::npos) continue;
    const std::string key(line.substr(0, space));
    const std::string value(line.substr(space + 1));
    if (key == "error") {
      r.error = value;
      continue;
    }
    double number = 0;
    if (!absl::SimpleAtod(value, &number)) continue;
    if (auto it = fields.find(key); it != fields.end()) {
      *it->second = number;
    } else if (key.rfind("cap.", 0) == 0) {
      r.capacity[key.substr(4)] = number;
    } else if (key.rfind("load.", 0) == 0) {
      r.load[key.substr(5)] = number;
    } else if (key.rfind("qmax.", 0) == 0) {
      r.max_queue[key.substr(5)] = number;
    }
  }
  if (text.empty()) r.error = "the child died without a result";
  return r;
}

// Runs the pipeline in this (forked) process. Eval: until end of stream;
// train: the first batch, then `train_batches` more.
RunResult RunPipelineHere(const std::string& dir, int threads, bool train,
                          int train_batches, int64_t expected_clips) {
  RunResult result;
  std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
  result.base_rss_mib = StatusKib("VmRSS:") / 1024;
  absl::StatusOr<DataLoaderConfig> config = audio::MakePipeline(
      {.directories = {dir},
       .mode = train ? audio::PipelineMode::kTrain : audio::PipelineMode::kEval,
       .worker_threads = static_cast<uint32_t>(threads)});
  if (!config.ok()) {
    result.error = config.status().ToString();
    return result;
  }
  config->set_metrics_interval_seconds(0.02);
  for (const StageConfig& stage : config->stage()) {
    if (stage.has_shuffle_buffer()) {
      result.shuffle_size = static_cast<double>(stage.shuffle_buffer().size());
    }
    if (stage.has_arrow_source()) {
      result.readahead = stage.arrow_source().readahead();
    }
    if (stage.has_audio_decoder()) {
      result.decoder_parallelism = stage.audio_decoder().parallelism();
    }
  }
  try {
    DataLoader loader(CreateStage);
    loader.Configure(*config);
    // Every 5 ms until the run ends: the gauges of the latest metrics
    // snapshot (every 20 ms); every 100 ms malloc's live bytes. mallinfo2
    // walks every arena's free lists under the arena's lock: sampled every
    // 5 ms it slowed the train run (250 MB of examples in its reservoir)
    // by a third.
    std::mutex sample_mu;
    int samples = 0;
    auto sample = [&] {
      const DataLoaderMetricsProto metrics = loader.GetMetrics();
      std::lock_guard lock(sample_mu);
      if (samples++ % 20 == 0) {
        const struct mallinfo2 heap = ::mallinfo2();
        result.peak_malloc_mib = std::max(
            result.peak_malloc_mib,
            static_cast<double>(heap.uordblks + heap.hblkhd) / (1 << 20));
      }
      for (const StageMetricProto& stage : metrics.stage_metrics()) {
        for (const QueueMetricProto& queue : stage.output_queue_metrics()) {
          double& peak = result.max_queue[stage.name()];
          peak = std::max(peak, static_cast<double>(queue.size()));
        }
        if (stage.has_shuffle_buffer()) {
          result.max_shuffle_fill =
              std::max(result.max_shuffle_fill,
                       static_cast<double>(stage.shuffle_buffer().fill()));
        }
        if (stage.has_batcher()) {
          result.max_batch_buffer_bytes = std::max(
              result.max_batch_buffer_bytes,
              static_cast<double>(stage.batcher().batch_buffer_bytes()));
        }
      }
    };
    {
      const struct mallinfo2 heap = ::mallinfo2();
      result.base_malloc_mib =
          static_cast<double>(heap.uordblks + heap.hblkhd) / (1 << 20);
    }
    const double cpu_start = CpuSeconds();
    const auto start = Clock::now();
    loader.Start();
    std::optional<std::jthread> sampler(
        std::in_place, [&](std::stop_token stop) {
          while (!stop.stop_requested()) {
            sample();
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
        });
    std::optional<TypedBatch> batch = loader.GetNext<TypedBatch>();
    if (!batch) throw std::runtime_error("no batch at all");
    const auto first = Clock::now();
    result.first_batch_seconds = Seconds(first - start);
    int64_t delivered = static_cast<int64_t>(batch->size());
    if (train) {
      delivered = 0;
      for (int i = 0; i < train_batches; ++i) {
        batch = loader.GetNext<TypedBatch>();
        if (!batch) throw std::runtime_error("the train pipeline ended");
        delivered += static_cast<int64_t>(batch->size());
      }
      result.seconds = Seconds(Clock::now() - first);
    } else {
      while ((batch = loader.GetNext<TypedBatch>())) {
        delivered += static_cast<int64_t>(batch->size());
      }
      result.seconds = Seconds(Clock::now() - start);
      if (delivered != expected_clips) {
        result.error = absl::StrCat("delivered ", delivered, " of ",
                                    expected_clips, " clips");
      }
    }
    batch.reset();
    result.cpu_busy =
        (CpuSeconds() - cpu_start) / (Seconds(Clock::now() - start) * threads);
    result.clips = static_cast<double>(delivered);
    sampler.reset();
    loader.Stop();
    result.peak_rss_mib = StatusKib("VmHWM:") / 1024;
    const DataLoaderMetricsProto metrics = loader.GetMetrics();
    for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
      result.load[stage.name()] = stage.load().load();
      for (const SkipCountProto& skip : stage.skipped()) {
        result.skipped += static_cast<double>(skip.count());
      }
      for (const QueueMetricProto& queue : stage.output_queue_metrics()) {
        result.capacity[stage.name()] += static_cast<double>(queue.capacity());
      }
    }
  } catch (const std::exception& e) {
    result.error = e.what();
  }
  return result;
}

}  // namespace

// RunPipelineHere in a forked child: its peak RSS is its own, and no run
// inherits another's freed memory.
RunResult RunPipeline(const std::string& dir, int threads, bool train,
                      int train_batches, int64_t expected_clips) {
  int fds[2];
  if (::pipe(fds) != 0) Die("pipe failed");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) Die("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    const std::string text = Serialize(
        RunPipelineHere(dir, threads, train, train_batches, expected_clips));
    for (size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) {
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return Deserialize(text);
}

Estimate EstimateMemory(const RunResult& r, const Clips& clips,
                        double mean_clip_seconds) {
  constexpr double kMib = 1 << 20;
  const double spectrogram = 64.0 * 101 * 4;
  const double batch = kBatchSize * (64.0 * 101 * 4 + 8 + 8);
  const double waveform = mean_clip_seconds * kSampleRate * 4;
  const double crop = kClipSamples * 4.0;
  const double record_batch =
      static_cast<double>(clips.file_bytes) / clips.record_batches;
  auto get = [](const std::map<std::string, double>& map, const char* stage,
                double otherwise) {
    auto it = map.find(stage);
    return it == map.end() ? otherwise : it->second;
  };
  auto channels = [&](const std::map<std::string, double>& sizes) {
    return get(sizes, "decoder", 16) * waveform +
           get(sizes, "crop", 16) * crop +
           (get(sizes, "spectrogram", 16) + get(sizes, "shuffle", 16)) *
               spectrogram;
  };
  const double decoder_scratch =
      r.decoder_parallelism * (3 * 48000 * 4 * 3 + 3 * kSampleRate * 4);
  const double rows_per_batch =
      static_cast<double>(clips.bytes.size()) / clips.record_batches;
  auto arrow_batches = [&](double queued_rows) {
    return std::min(static_cast<double>(clips.record_batches),
                    r.readahead + std::ceil(queued_rows / rows_per_batch) + 1);
  };
  const double pinned = arrow_batches(get(r.max_queue, "clips", 0));
  const double arrow = pinned * record_batch;
  const double held = channels(r.max_queue);
  Estimate e;
  e.occupancy_mib =
      (arrow + decoder_scratch + held + r.max_shuffle_fill * spectrogram +
       r.max_batch_buffer_bytes) /
      kMib;
  e.bound_mib =
      (arrow_batches(get(r.capacity, "clips", 1024)) * record_batch +
       decoder_scratch + channels(r.capacity) + r.shuffle_size * spectrogram +
       (get(r.capacity, "batches", 16) + 2) * batch) /
      kMib;
  e.how = absl::StrFormat(
      "reservoir %.0f x %.1f KiB (peak fill; size %.0f) = %.1f + batch "
      "buffers %.1f (peak gauge; a batch is %.2f) + channels %.1f (peak "
      "sizes decoder %.0f/%.0f x %.0f KiB, crop %.0f/%.0f x %.1f KiB, "
      "spectrogram %.0f/%.0f and shuffle %.0f/%.0f x %.1f KiB) + arrow %.0f "
      "record batches x %.1f (readahead %.0f, clips channel peak %.0f/%.0f "
      "rows of %.0f per batch) + decoder scratch %.1f (MiB)",
      r.max_shuffle_fill, spectrogram / 1024, r.shuffle_size,
      r.max_shuffle_fill * spectrogram / kMib, r.max_batch_buffer_bytes / kMib,
      batch / kMib, held / kMib, get(r.max_queue, "decoder", 0),
      get(r.capacity, "decoder", 0), waveform / 1024,
      get(r.max_queue, "crop", 0), get(r.capacity, "crop", 0), crop / 1024,
      get(r.max_queue, "spectrogram", 0), get(r.capacity, "spectrogram", 0),
      get(r.max_queue, "shuffle", 0), get(r.capacity, "shuffle", 0),
      spectrogram / 1024, pinned, record_batch / kMib, r.readahead,
      get(r.max_queue, "clips", 0), get(r.capacity, "clips", 0), rows_per_batch,
      decoder_scratch / kMib);
  return e;
}

}  // namespace sluice::audio_bench
