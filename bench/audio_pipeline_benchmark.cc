// End-to-end benchmark of the default audio eval pipeline
// (proto/examples/audio_eval.textproto: arrow_source -> audio_decoder ->
// crop_or_pad -> spectrogram -> shuffle_buffer -> batcher) on generated
// Arrow clips, against the one-core ceiling of the same work and against the
// torch DataLoader its users run today, all in the same run.
//
//   out/release/bench/audio_pipeline_benchmark [--clips N] [--rounds R]
//       [--threads 1,2] [--no-peer] [--train-batches B] [--dir DIR]
//
// (run from anywhere; the torch peer script is found in the source tree).
//
// Data: N clips (default 2000; `sluice gen audio` with no damaged clips,
// 4 files) written once into DIR (default /tmp/sluice_audio_bench_<N>),
// then read whole through io/arrow (which also warms the page cache).
// Rounds are interleaved (ceiling, pipeline per thread count, torch peer,
// train pipeline, ...); the table shows the best of the rounds and the
// range; ratios are taken within a round and judged by their median, since
// this host's speed drifts by a third between rounds: each eval run against
// the mean of a ceiling pass just before and one just after it, the 2-thread
// run against that round's peer.
// - Ceiling: decode + resample (soxr high) + centre crop 1 s + log-mel
//   spectrogram (n_fft 400, hop 160, 64 mels) of every clip in one plain
//   loop on one core, no engine, the clip bytes already in memory; beside
//   it the same loop on T threads at once (how far this machine's cores
//   scale at all).
// - Pipeline: the eval pipeline with T worker threads, one pass, every clip
//   once (checked), each run in a forked child so that its peak RSS
//   (VmHWM after clear_refs, minus the child's RSS at the start) is its
//   own. Time to the first batch counts from Start(). Stage loads are the
//   loader's own metrics since start.
// - Train (--train-batches B, default 40; 0 skips): the train pipeline on
//   the largest thread count: first batch (after min_fill 8000 examples)
//   and B batches after it; mostly there for peak RSS against its 10000
//   spectrogram reservoir.
// - Torch peer: bench/audio_torch_peer.py under /usr/bin/python3, a
//   torch.utils.data.DataLoader(num_workers=2, batch_size=256) doing the
//   same transforms with soundfile and torchaudio. Debian's python3 has no
//   pyarrow, so the clips go to it as one flat file (written here from the
//   rows read with sluice's Arrow reader) plus offsets and labels .npy.
// Prints a table, then one JSON line (prefixed "JSON ").
#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bindings/cli/audio_data.h"
#include "engine/data_loader.h"
#include "engine/typed_batch.h"
#include "io/arrow/ipc_bytes.h"
#include "stages/audio/codec/audio_decoding.h"
#include "stages/audio/codec/resampler.h"
#include "stages/audio/default_pipeline.h"
#include "stages/audio/dsp/crop_or_pad.h"
#include "stages/audio/dsp/spectrogram.h"
#include "stages/stage_factory.h"

#ifndef SLUICE_AUDIO_TORCH_PEER
#define SLUICE_AUDIO_TORCH_PEER "bench/audio_torch_peer.py"
#endif

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kSampleRate = 16000;
constexpr size_t kClipSamples = 16000;  // eval centre crop, 1 s
constexpr int kBatchSize = 256;
constexpr char kPython[] = "/usr/bin/python3";

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "audio_pipeline_benchmark: %s\n", message.c_str());
  std::exit(1);
}

struct Options {
  int64_t clips = 2000;
  int rounds = 3;
  std::vector<int> threads = {1, 2};
  bool peer = true;
  int train_batches = 40;
  std::string dir;
};

Options ParseOptions(int argc, char** argv) {
  constexpr char kUsage[] =
      "usage: [--clips N] [--rounds R] [--threads 1,2] [--no-peer] "
      "[--train-batches B] [--dir DIR]";
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--no-peer") {
      options.peer = false;
      continue;
    }
    if (i + 1 >= argc) Die(kUsage);
    const std::string value = argv[++i];
    if (flag == "--clips" && absl::SimpleAtoi(value, &options.clips) &&
        options.clips > 0) {
      continue;
    }
    if (flag == "--rounds" && absl::SimpleAtoi(value, &options.rounds) &&
        options.rounds > 0) {
      continue;
    }
    if (flag == "--train-batches" &&
        absl::SimpleAtoi(value, &options.train_batches) &&
        options.train_batches >= 0) {
      continue;
    }
    if (flag == "--dir") {
      options.dir = value;
      continue;
    }
    if (flag == "--threads") {
      options.threads.clear();
      for (absl::string_view part : absl::StrSplit(value, ',')) {
        int threads = 0;
        if (!absl::SimpleAtoi(part, &threads) || threads < 1) {
          Die("--threads takes a list such as 1,2");
        }
        options.threads.push_back(threads);
      }
      continue;
    }
    Die(absl::StrCat("unknown or bad flag ", flag, "\n", kUsage));
  }
  if (options.dir.empty()) {
    options.dir = absl::StrCat("/tmp/sluice_audio_bench_", options.clips);
  }
  return options;
}

// ---------------------------------------------------------------- data

// Every clip of the data set, in row order, read through io/arrow.
struct Clips {
  std::vector<std::vector<std::byte>> files;  // the views point in here
  std::vector<std::span<const std::byte>> bytes;
  std::vector<int64_t> labels;
  int64_t file_bytes = 0;
  int64_t encoded_bytes = 0;
  int64_t record_batches = 0;
};

// The Arrow files live in DIR/arrow (the pipeline reads that directory
// alone); the marker and the peer's files sit beside it.
std::string ArrowDir(const Options& options) { return options.dir + "/arrow"; }

std::vector<std::string> EnsureData(const Options& options) {
  const std::string marker = options.dir + "/complete";
  if (!std::filesystem::exists(marker)) {
    std::filesystem::remove_all(options.dir);
    std::printf("generating %lld clips into %s ...\n",
                static_cast<long long>(options.clips),
                ArrowDir(options).c_str());
    std::fflush(stdout);
    absl::StatusOr<cli::AudioDataset> written =
        cli::WriteAudioDataset({.dir = ArrowDir(options),
                                .clips = options.clips,
                                .classes = 8,
                                .files = 4,
                                .corrupt_every = 0});
    if (!written.ok()) Die(written.status().ToString());
    std::ofstream(marker) << options.clips << "\n";
  }
  std::vector<std::string> paths;
  for (const auto& entry :
       std::filesystem::directory_iterator(ArrowDir(options))) {
    if (entry.path().extension() == ".arrow") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

Clips ReadClips(const std::vector<std::string>& paths) {
  Clips clips;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    std::vector<std::byte>& file = clips.files.emplace_back(
        static_cast<size_t>(std::filesystem::file_size(path)));
    in.read(reinterpret_cast<char*>(file.data()),
            static_cast<std::streamsize>(file.size()));
    if (!in) Die("cannot read " + path);
    clips.file_bytes += static_cast<int64_t>(file.size());
    absl::StatusOr<io::arrow::IpcContents> contents =
        io::arrow::ReadIpcBytes(file, path);
    if (!contents.ok()) Die(contents.status().ToString());
    const int audio = contents->schema.FieldIndex("audio");
    const int label = contents->schema.FieldIndex("label");
    if (audio < 0 || label < 0) Die(path + ": no audio or label column");
    for (const io::arrow::RecordBatch& batch : contents->batches) {
      ++clips.record_batches;
      for (int64_t r = 0; r < batch.num_rows(); ++r) {
        clips.bytes.push_back(batch.column(audio).Binary(r));
        clips.labels.push_back(batch.column(label).Value<int64_t>(r));
        clips.encoded_bytes += static_cast<int64_t>(clips.bytes.back().size());
      }
    }
  }
  return clips;
}

// The peer's input: DATA (the clips' bytes concatenated), DATA.offsets.npy
// and DATA.labels.npy (int64).
void WriteNpyInt64(const std::string& path, const std::vector<int64_t>& v) {
  std::string header = absl::StrFormat(
      "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }", v.size());
  // Magic (6) + version (2) + length (2) + header + '\n', a multiple of 64.
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t length = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&length), 2);
  out << header;
  out.write(reinterpret_cast<const char*>(v.data()),
            static_cast<std::streamsize>(v.size() * sizeof(int64_t)));
  if (!out) Die("cannot write " + path);
}

std::string WritePeerData(const Clips& clips, const std::string& dir) {
  const std::string data = dir + "/peer/clips.bin";
  std::filesystem::create_directories(dir + "/peer");
  std::ofstream out(data, std::ios::binary);
  std::vector<int64_t> offsets = {0};
  for (std::span<const std::byte> clip : clips.bytes) {
    out.write(reinterpret_cast<const char*>(clip.data()),
              static_cast<std::streamsize>(clip.size()));
    offsets.push_back(offsets.back() + static_cast<int64_t>(clip.size()));
  }
  out.close();
  if (!out) Die("cannot write " + data);
  WriteNpyInt64(data + ".offsets.npy", offsets);
  WriteNpyInt64(data + ".labels.npy", clips.labels);
  return data;
}

// ------------------------------------------------------------- ceiling

struct CeilingPass {
  double seconds = 0;
  double audio_seconds = 0;  // of the clips as encoded
};

// One core: decode + resample + centre crop + log-mel spectrogram of every
// clip, the pipeline's parameters, no engine.
CeilingPass CeilingOnce(const Clips& clips) {
  audio::DecodedAudio decoded;
  audio::Resampler resampler(audio::ResampleQuality::kHigh);
  std::vector<float> resampled;
  std::vector<float> clip(kClipSamples);
  absl::StatusOr<audio::Spectrogram> spectrogram =
      audio::Spectrogram::Create({.sample_rate = kSampleRate,
                                  .n_fft = 400,
                                  .hop_length = 160,
                                  .mel = audio::MelConfig{.n_mels = 64},
                                  .log = audio::LogScale::kNaturalLog});
  if (!spectrogram.ok()) Die(spectrogram.status().ToString());
  std::vector<float> out(spectrogram->OutputSize(kClipSamples));
  CeilingPass pass;
  float sink = 0;
  const auto start = Clock::now();
  for (size_t i = 0; i < clips.bytes.size(); ++i) {
    if (!audio::DecodeAudioInto(clips.bytes[i], {.max_seconds = 60}, decoded)
             .ok()) {
      Die(absl::StrCat("clip ", i, " does not decode"));
    }
    pass.audio_seconds +=
        static_cast<double>(decoded.samples.size()) / decoded.sample_rate;
    if (!resampler
             .Resample(decoded.samples, decoded.sample_rate, kSampleRate,
                       resampled)
             .ok()) {
      Die("resampling failed");
    }
    audio::CropOrPad(resampled, 0, static_cast<int64_t>(i),
                     audio::CropMode::kEval, clip);
    if (!spectrogram->Compute(clip, out).ok()) Die("spectrogram failed");
    sink += out[i % out.size()];
  }
  pass.seconds = Seconds(Clock::now() - start);
  if (sink == 1.2345f) std::printf(" ");  // keep the work observable
  return pass;
}

// `threads` copies of CeilingOnce at once: all their clips over the slowest
// one's time, in clips/s.
double ParallelCeiling(const Clips& clips, int threads) {
  std::vector<CeilingPass> each(threads);
  {
    std::vector<std::jthread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] { each[t] = CeilingOnce(clips); });
    }
  }
  double slowest = 0;
  for (const CeilingPass& pass : each)
    slowest = std::max(slowest, pass.seconds);
  return static_cast<double>(threads * clips.bytes.size()) / slowest;
}

// ------------------------------------------------------------ pipeline

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

// What one pipeline run measured, as "key value" lines across the fork.
struct RunResult {
  std::string error;  // set: the run failed
  double seconds = 0;
  double first_batch_seconds = 0;
  double clips = 0;  // delivered (eval: all; train: after the first batch)
  double skipped = 0;
  double cpu_busy = 0;      // process CPU over wall x threads
  double base_rss_mib = 0;  // the child's RSS when it started
  double peak_rss_mib = 0;  // VmHWM at the end
  // Bytes malloc handed out and not yet freed (mallinfo2 uordblks +
  // hblkhd), at the start and at their sampled peak.
  double base_malloc_mib = 0;
  double peak_malloc_mib = 0;
  // Inputs of the memory estimate (peaks sampled after every batch).
  double max_shuffle_fill = 0;
  double shuffle_size = 0;
  double max_batch_buffer_bytes = 0;
  double readahead = 0;
  double decoder_parallelism = 0;
  std::map<std::string, double> capacity;   // output channel per stage
  std::map<std::string, double> max_queue;  // sampled peak size, per stage
  std::map<std::string, double> load;       // per stage, since start
};

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

// What the run held, in MiB, from the config and the run's sampled
// occupancy (peaks sampled every 5 ms): the reservoir's peak fill x one
// spectrogram example, the batcher's batch buffers (its peak
// batch_buffer_bytes gauge), each output channel's peak size x that
// stage's example bytes (decoder: a mean waveform at 16 kHz; crop: 1 s;
// spectrogram and shuffle: a spectrogram), the decoders' per-coroutine
// buffers (their largest clip: 3 s of 48 kHz stereo, interleaved and mixed,
// and its 16 kHz resampling), and arrow_source's record batches: readahead
// being read or queued, plus those the examples in its output channel
// ("clips", waiting for the decoder) hold views into: peak size / rows per
// record batch, rounded up, + 1 (at most every batch of the pass). The
// bound: the same with every channel full at its capacity, the reservoir at
// its size, and (capacity + 2) batches. Not counted: Example and channel
// bookkeeping, thread stacks, FFT plans, malloc's own overhead and
// retention.
struct Estimate {
  double occupancy_mib = 0;
  double bound_mib = 0;
  std::string how;
};

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

// ----------------------------------------------------------------- peer

struct PeerResult {
  bool ok = false;
  double clips_per_second = 0;
  double first_batch_seconds = 0;
  std::string message;
};

double JsonNumber(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return 0;
  return std::atof(json.c_str() + at + key.size() + 3);
}

PeerResult RunPeer(const std::string& data) {
  PeerResult result;
  const std::string command =
      absl::StrCat(kPython, " ", SLUICE_AUDIO_TORCH_PEER, " ", data,
                   " --workers 2 --batch-size ", kBatchSize, " 2>&1");
  std::fflush(stdout);
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) Die("cannot run the torch peer");
  std::string output;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    output.append(buffer, n);
  }
  const int status = ::pclose(pipe);
  const size_t json = output.rfind("{\"clips\"");
  if (status != 0 || json == std::string::npos) {
    result.message = output;
    return result;
  }
  const std::string line = output.substr(json, output.find('\n', json) - json);
  result.ok = true;
  result.clips_per_second = JsonNumber(line, "clips_per_second");
  result.first_batch_seconds = JsonNumber(line, "first_batch_seconds");
  return result;
}

bool PeerAvailable() {
  const std::string command =
      absl::StrCat(kPython,
                   " -c 'import torch, torchaudio, soundfile, numpy' "
                   ">/dev/null 2>&1");
  return std::filesystem::exists(SLUICE_AUDIO_TORCH_PEER) &&
         std::system(command.c_str()) == 0;
}

// ---------------------------------------------------------------- main

// Best (largest) and range of a rate over the rounds.
struct Range {
  std::vector<double> values;
  void Add(double v) { values.push_back(v); }
  double best() const {
    return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
  }
  double low() const {
    return values.empty() ? 0 : *std::min_element(values.begin(), values.end());
  }
  // Every value in the order added (round by round), in `format`.
  std::string List(const char* format) const {
    std::string text;
    for (double v : values) {
      absl::StrAppend(&text, text.empty() ? "" : " ",
                      absl::StrFormat(format, v));
    }
    return text;
  }
  // The middle value (the mean of the two middle ones for an even count).
  double median() const {
    if (values.empty()) return 0;
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const size_t half = sorted.size() / 2;
    return sorted.size() % 2 ? sorted[half]
                             : (sorted[half - 1] + sorted[half]) / 2;
  }
  std::string Text(const char* format = "%.0f") const {
    if (values.empty()) return "-";
    return absl::StrFormat(format, low()) + "-" +
           absl::StrFormat(format, best());
  }
};

struct PipelineRuns {
  Range clips_per_second;
  // Per round: clips/s over threads x that round's 1-core ceiling.
  Range ceiling_ratio;
  Range first_batch;  // seconds; best is the smallest
  RunResult best;     // the fastest round's run (loads, RSS)
  double best_rate = 0;
  std::string error;
};

void Record(PipelineRuns& runs, const RunResult& run, double rate) {
  if (!run.error.empty()) {
    runs.error = run.error;
    return;
  }
  runs.clips_per_second.Add(rate);
  runs.first_batch.Add(run.first_batch_seconds);
  if (rate > runs.best_rate) {
    runs.best_rate = rate;
    runs.best = run;
  }
}

std::string Loads(const RunResult& run) {
  std::string text;
  for (const char* stage :
       {"clips", "decoder", "crop", "spectrogram", "shuffle", "batches"}) {
    auto it = run.load.find(stage);
    if (it != run.load.end()) {
      absl::StrAppend(&text, stage, "=", absl::StrFormat("%.2f", it->second),
                      " ");
    }
  }
  return text;
}

int Run(const Options& options) {
  const std::vector<std::string> paths = EnsureData(options);
  if (paths.empty()) Die("no .arrow files in " + options.dir);
  const Clips clips = ReadClips(paths);
  const int64_t n = static_cast<int64_t>(clips.bytes.size());
  const bool peer = options.peer && PeerAvailable();
  const std::string peer_data = peer ? WritePeerData(clips, options.dir) : "";
  const int max_threads =
      *std::max_element(options.threads.begin(), options.threads.end());

  double ceiling_seconds = 1e30;
  double audio_seconds = 0;
  std::vector<Range> parallel_ceiling(options.threads.size());
  std::vector<PipelineRuns> eval(options.threads.size());
  PipelineRuns train;
  Range peer_rate;
  Range peer_first;
  std::string peer_error;
  Range ceiling_rate;
  // Per round: the largest thread count's eval pipeline over the loop on
  // as many threads, and over the torch peer.
  Range over_parallel_loop;
  Range over_peer;
  Range machine_scaling;  // the loop on T threads over T x the 1-core loop
  // One pass of the 1-core ceiling loop: its clips/s.
  auto ceiling_now = [&] {
    const CeilingPass pass = CeilingOnce(clips);
    ceiling_seconds = std::min(ceiling_seconds, pass.seconds);
    ceiling_rate.Add(n / pass.seconds);
    audio_seconds = pass.audio_seconds;
    return n / pass.seconds;
  };
  for (int round = 0; round < options.rounds; ++round) {
    double round_rate = 0;     // the largest thread count's eval pipeline
    double round_ceiling = 0;  // its bracketing ceiling
    for (size_t t = 0; t < options.threads.size(); ++t) {
      const int threads = options.threads[t];
      // Each run is bracketed by a ceiling pass before and after it: its
      // bound is their mean, measured as close to it as can be.
      const double before = ceiling_now();
      double loop_rate = 0;
      if (threads > 1) {
        loop_rate = ParallelCeiling(clips, threads);
        parallel_ceiling[t].Add(loop_rate);
      }
      const RunResult run =
          RunPipeline(ArrowDir(options), threads, false, 0, n);
      const double bound = (before + ceiling_now()) / 2;
      const double rate = run.seconds > 0 ? n / run.seconds : 0;
      Record(eval[t], run, rate);
      if (!run.error.empty()) continue;
      eval[t].ceiling_ratio.Add(rate / (threads * bound));
      if (threads == max_threads) {
        round_rate = rate;
        round_ceiling = bound;
        if (loop_rate > 0) {
          over_parallel_loop.Add(rate / loop_rate);
          machine_scaling.Add(loop_rate / (threads * bound));
        }
      }
    }
    if (peer) {
      const PeerResult result = RunPeer(peer_data);
      if (result.ok) {
        peer_rate.Add(result.clips_per_second);
        peer_first.Add(result.first_batch_seconds);
        if (round_rate > 0) over_peer.Add(round_rate / result.clips_per_second);
      } else {
        peer_error = result.message;
      }
    }
    if (options.train_batches > 0) {
      const RunResult run = RunPipeline(ArrowDir(options), max_threads, true,
                                        options.train_batches, n);
      const double rate = run.seconds > 0 ? run.clips / run.seconds : 0;
      Record(train, run, rate);
      if (run.error.empty() && round_ceiling > 0) {
        train.ceiling_ratio.Add(rate / (max_threads * round_ceiling));
      }
    }
  }

  const double ceiling = n / ceiling_seconds;
  const double mean_clip_seconds = audio_seconds / n;
  const double audio_per_clip = audio_seconds / n;
  std::printf(
      "data: %lld clips (%.0f s of audio, mean %.2f s; 8-48 kHz WAV16 / "
      "WAV float / FLAC / Ogg Vorbis, mono and stereo), %.1f MB in %zu "
      "Arrow files (%s), page cache warm; best of %d interleaved rounds "
      "(range low-high)\n",
      static_cast<long long>(n), audio_seconds, mean_clip_seconds,
      clips.file_bytes / 1e6, paths.size(), ArrowDir(options).c_str(),
      options.rounds);
  std::printf(
      "work per clip: decode (libsndfile) + resample to 16 kHz (soxr high) "
      "+ centre crop/pad 1 s + log-mel spectrogram (n_fft 400, hop 160, 64 "
      "mels) -> float32 (64, 101); batches of %d\n\n",
      kBatchSize);
  std::printf("%-34s %9s %13s %9s %11s %9s %9s  %s\n", "run", "clips/s",
              "range", "audio s/s", "1st batch s", "vs ceil", "peak MiB",
              "stage load (best round)");
  std::printf("%-34s %9.0f %13s %9.0f %11s %9s %9s\n",
              "ceiling, 1 core, plain loop", ceiling,
              ceiling_rate.Text().c_str(), ceiling * audio_per_clip, "-",
              "100%", "-");
  for (size_t t = 0; t < options.threads.size(); ++t) {
    if (options.threads[t] == 1) continue;
    const Range& p = parallel_ceiling[t];
    std::printf(
        "%-34s %9.0f %13s %9.0f %11s %8.0f%% %9s\n",
        absl::StrCat("ceiling loop on ", options.threads[t], " threads at once")
            .c_str(),
        p.best(), p.Text().c_str(), p.best() * audio_per_clip, "-",
        100 * p.best() / (options.threads[t] * ceiling), "-");
  }
  std::string json = absl::StrFormat(
      "{\"benchmark\":\"audio_pipeline\",\"clips\":%d,\"audio_seconds\":%.1f,"
      "\"rounds\":%d,\"ceiling_1core_clips_per_second\":%.1f",
      n, audio_seconds, options.rounds, ceiling);
  std::vector<std::string> memory_lines;
  // Per run: peak RSS over the config's bound (its buffers and capacities).
  std::vector<std::pair<std::string, double>> rss_over_bound;
  auto print_run = [&](const std::string& name, const PipelineRuns& runs,
                       int threads, const std::string& key) {
    if (!runs.error.empty() && runs.clips_per_second.values.empty()) {
      std::printf("%-34s failed: %s\n", name.c_str(), runs.error.c_str());
      json += absl::StrFormat(",\"%s_error\":\"failed\"", key);
      return;
    }
    const RunResult& r = runs.best;
    const double rate = runs.best_rate;
    const double of_ceiling = runs.ceiling_ratio.median();
    const double measured = r.peak_rss_mib - r.base_rss_mib;
    std::printf("%-34s %9.0f %13s %9.0f %11.2f %8.0f%% %9.1f  %s\n",
                name.c_str(), rate, runs.clips_per_second.Text().c_str(),
                rate * audio_per_clip, runs.first_batch.low(), 100 * of_ceiling,
                measured, Loads(r).c_str());
    const Estimate e = EstimateMemory(r, clips, mean_clip_seconds);
    const double live = r.peak_malloc_mib - r.base_malloc_mib;
    rss_over_bound.emplace_back(name, measured / e.bound_mib);
    memory_lines.push_back(absl::StrFormat(
        "%s:\n    peak RSS %.1f MiB above the child's start (%.1f -> %.1f "
        "MiB); malloc's live bytes at their sampled peak %.1f MiB above the "
        "start\n    config bound %.1f MiB (RSS/bound %.0f%%); estimate of what "
        "the run held at its peak %.1f MiB (RSS/estimate %.0f%%, "
        "live/estimate %.0f%%)\n    "
        "estimate = %s\n    cpu busy %.0f%%, clips skipped %.0f",
        name, measured, r.base_rss_mib, r.peak_rss_mib, live, e.bound_mib,
        100 * measured / e.bound_mib, e.occupancy_mib,
        100 * measured / e.occupancy_mib, 100 * live / e.occupancy_mib, e.how,
        100 * r.cpu_busy, r.skipped));
    json += absl::StrFormat(
        ",\"%s_clips_per_second\":%.1f,\"%s_clips_per_second_low\":%.1f,"
        "\"%s_audio_seconds_per_second\":%.1f,\"%s_first_batch_seconds\":%.3f,"
        "\"%s_ceiling_ratio\":%.3f,\"%s_ceiling_ratio_min\":%.3f,"
        "\"%s_ceiling_ratio_max\":%.3f,\"%s_peak_rss_mib\":%.1f,"
        "\"%s_rss_estimate_mib\":%.1f,\"%s_rss_bound_mib\":%.1f,"
        "\"%s_malloc_live_peak_mib\":%.1f",
        key, rate, key, runs.clips_per_second.low(), key, rate * audio_per_clip,
        key, runs.first_batch.low(), key, of_ceiling, key,
        runs.ceiling_ratio.low(), key, runs.ceiling_ratio.best(), key, measured,
        key, e.occupancy_mib, key, e.bound_mib, key, live);
    for (const auto& [stage, load] : r.load) {
      json += absl::StrFormat(",\"%s_load_%s\":%.3f", key, stage, load);
    }
  };
  for (size_t t = 0; t < options.threads.size(); ++t) {
    const int threads = options.threads[t];
    print_run(absl::StrCat("sluice eval pipeline, ", threads, " thr"), eval[t],
              threads, absl::StrCat("eval_t", threads));
  }
  if (options.train_batches > 0) {
    print_run(absl::StrCat("sluice train, ", max_threads, " thr (",
                           options.train_batches, " b)"),
              train, max_threads, absl::StrCat("train_t", max_threads));
  }
  if (peer && !peer_rate.values.empty()) {
    std::printf("%-34s %9.0f %13s %9.0f %11.2f %8.0f%% %9s\n",
                "torch DataLoader, 2 workers", peer_rate.best(),
                peer_rate.Text().c_str(), peer_rate.best() * audio_per_clip,
                peer_first.low(), 100 * peer_rate.best() / (2 * ceiling), "-");
    json += absl::StrFormat(",\"torch_peer_clips_per_second\":%.1f",
                            peer_rate.best());
  }
  std::printf(
      "\n(train: clips/s after the first batch; its 1st batch waits for "
      "min_fill 8000. \"vs ceil\": the median over the rounds of clips/s "
      "over threads x the 1-core ceiling passes just before and after "
      "it; train: those of its round's 2-thread eval run.)\n");
  std::printf("\nmemory (peak RSS of each forked run, best round):\n");
  for (const std::string& line : memory_lines) {
    std::printf("  %s\n", line.c_str());
  }
  // Targets, judged per round (each ratio against a bound measured in the
  // same round) by the median.
  std::printf("\ntargets (per interleaved round: min, median, max):\n");
  const size_t widest = static_cast<size_t>(
      std::max_element(options.threads.begin(), options.threads.end()) -
      options.threads.begin());
  const Range& ratio = eval[widest].ceiling_ratio;
  std::printf(
      "  %d threads vs %dx the 1-core ceiling: %s, median %.0f%% (target >= "
      "85%%): %s\n    rounds: %s\n",
      max_threads, max_threads, ratio.Text("%.2f").c_str(),
      100 * ratio.median(),
      ratio.values.empty()     ? "no run"
      : ratio.median() >= 0.85 ? "met"
                               : "NOT met",
      ratio.List("%.2f").c_str());
  if (!over_parallel_loop.values.empty()) {
    std::printf(
        "    (the machine: the loop on %d threads at once reached %s of %dx "
        "the 1-core loop, median %.2f; the pipeline over that loop: %s, "
        "median %.2f)\n",
        max_threads, machine_scaling.Text("%.2f").c_str(), max_threads,
        machine_scaling.median(), over_parallel_loop.Text("%.2f").c_str(),
        over_parallel_loop.median());
  }
  json += absl::StrFormat(
      ",\"ceiling_ratio\":%.3f,\"ceiling_ratio_min\":%.3f,"
      "\"ceiling_ratio_max\":%.3f,\"over_parallel_loop\":%.3f",
      ratio.median(), ratio.low(), ratio.best(), over_parallel_loop.median());
  if (!peer) {
    std::printf("  torch peer: skipped (%s)\n",
                options.peer
                    ? "/usr/bin/python3 lacks torch, torchaudio or soundfile"
                    : "--no-peer");
  } else if (over_peer.values.empty()) {
    std::printf("  torch peer: failed:\n%s\n", peer_error.c_str());
  } else {
    std::printf(
        "  sluice %d thr vs torch DataLoader (2 workers): %s x, median %.2fx "
        "(target >= 3x): %s\n    rounds: %s\n"
        "    (the peer reads the same rows' bytes, extracted with sluice's "
        "Arrow reader into %s (+ .offsets.npy, .labels.npy) and "
        "memory-mapped: Debian's python3 has no pyarrow; its time includes "
        "worker start-up, first batch %.2f s)\n",
        max_threads, over_peer.Text("%.2f").c_str(), over_peer.median(),
        over_peer.median() >= 3 ? "met" : "NOT met",
        over_peer.List("%.2f").c_str(), peer_data.c_str(), peer_first.low());
    json += absl::StrFormat(
        ",\"sluice_over_torch\":%.3f,\"sluice_over_torch_min\":%.3f,"
        "\"sluice_over_torch_max\":%.3f",
        over_peer.median(), over_peer.low(), over_peer.best());
  }
  double worst_rss = 0;
  std::string rss_text;
  for (const auto& [name, over] : rss_over_bound) {
    worst_rss = std::max(worst_rss, over);
    absl::StrAppendFormat(&rss_text, "%s%s %.0f%%",
                          rss_text.empty() ? "" : ", ", name, 100 * over);
  }
  std::printf(
      "  peak RSS over the buffers and capacities the config asks for: %s "
      "(target <= 110%%): %s\n",
      rss_text.c_str(), worst_rss <= 1.1 ? "met" : "NOT met");
  std::printf("JSON %s}\n", json.c_str());
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  return sluice::Run(sluice::ParseOptions(argc, argv));
}
