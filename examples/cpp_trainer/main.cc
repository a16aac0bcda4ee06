// A trainer stand-in that embeds sluice: it builds the default lc0 training
// pipeline (or the eval pipeline) on a data directory, consumes batches on
// its own thread with a toy "training step" (a checksum over the tensors),
// prints throughput and the pipeline's metrics every few seconds, and stops
// cleanly on Ctrl-C.
//
//   cpp_trainer CONFIG.textproto DATA_DIR [--batches N] [--seconds S]
//
// CONFIG is a text-format DataLoaderConfig (e.g. the installed
// share/sluice/proto/examples/lc0_train.textproto); DATA_DIR replaces the
// directory of its file_path_provider stage.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "google/protobuf/text_format.h"
#include "sluice/sluice.h"

namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

// The toy training step: touches every float of the batch (lc0's tensors
// are all float32; data_as checks that).
double TrainingStep(const sluice::Batch& batch) {
  double checksum = 0;
  for (const sluice::Tensor& tensor : batch.tensors()) {
    const float* values = tensor.data_as<float>();
    for (size_t i = 0; i < tensor.elements(); ++i) checksum += values[i];
  }
  return checksum;
}

// Non-zero entries of the planes tensor: independent of position order.
long NonZeroPlaneEntries(const sluice::Batch& batch) {
  const sluice::Tensor& planes = batch.tensor("planes");
  const float* values = planes.data_as<float>();
  long count = 0;
  for (size_t i = 0; i < planes.elements(); ++i) {
    count += values[i] != 0.0f;
  }
  return count;
}

std::string ShapeText(const sluice::Tensor& tensor) {
  std::string text = "(";
  for (size_t i = 0; i < tensor.shape.size(); ++i) {
    text += (i ? "," : "") + std::to_string(tensor.shape[i]);
  }
  return text + ")";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: cpp_trainer CONFIG.textproto DATA_DIR [--batches N] "
                 "[--seconds S]\n");
    return 2;
  }
  long max_batches = 0;
  double max_seconds = 0;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--batches") == 0) {
      max_batches = std::atol(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--seconds") == 0) {
      max_seconds = std::atof(argv[i + 1]);
    }
  }
  std::ifstream file(argv[1]);
  std::stringstream text;
  text << file.rdbuf();

  try {
    sluice::DataLoaderConfig config;
    if (!google::protobuf::TextFormat::ParseFromString(text.str(), &config)) {
      std::fprintf(stderr, "cpp_trainer: cannot parse %s\n", argv[1]);
      return 2;
    }
    // Point the pipeline's file discovery at DATA_DIR.
    for (sluice::StageConfig& stage : *config.mutable_stage()) {
      if (!stage.has_file_path_provider()) continue;
      stage.mutable_file_path_provider()->clear_directory();
      stage.mutable_file_path_provider()->add_directory(argv[2]);
    }
    sluice::Loader loader(config);
    std::signal(SIGINT, OnSignal);
    std::signal(SIGTERM, OnSignal);
    loader.Start();

    std::atomic<long> batches{0};
    std::atomic<long> positions{0};
    std::atomic<bool> done{false};
    double checksum = 0;
    long nonzero_planes = 0;
    // The trainer's own thread pulls batches; the main thread reports.
    std::thread trainer([&] {
      while (std::optional<sluice::Batch> batch = loader.Next()) {
        if (batches == 0) {
          for (const sluice::Tensor& tensor : batch->tensors()) {
            std::printf("tensor %s %s %s\n", tensor.name.c_str(),
                        ShapeText(tensor).c_str(), tensor.dtype.c_str());
          }
        }
        checksum += TrainingStep(*batch);
        nonzero_planes += NonZeroPlaneEntries(*batch);
        positions += batch->size();
        if (++batches == max_batches) break;
      }
      done = true;
    });
    const auto start = std::chrono::steady_clock::now();
    auto next_report = start + std::chrono::seconds(2);
    while (!done && !g_stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const auto now = std::chrono::steady_clock::now();
      const double elapsed = std::chrono::duration<double>(now - start).count();
      if (max_seconds > 0 && elapsed >= max_seconds) break;
      if (now >= next_report) {
        next_report = now + std::chrono::seconds(2);
        std::printf("%.1fs: %ld batches, %.0f positions/s\n", elapsed,
                    batches.load(), positions / elapsed);
        const sluice::DataLoaderMetricsProto metrics = loader.Metrics();
        for (const auto& stage : metrics.stage_metrics()) {
          std::printf("  %-10s load %.2f\n", stage.name().c_str(),
                      stage.load().load());
        }
        std::fflush(stdout);
      }
    }
    loader.Stop();  // wakes the trainer thread if it is waiting
    trainer.join();
    std::printf(
        "done: %ld batches, %ld positions, nonzero plane entries %ld, "
        "checksum %.6g\n",
        batches.load(), positions.load(), nonzero_planes, checksum);
  } catch (const sluice::ConfigError& error) {
    std::fprintf(stderr, "cpp_trainer: bad config: %s\n", error.what());
    return 2;
  } catch (const sluice::PipelineError& error) {
    std::fprintf(stderr, "cpp_trainer: pipeline failed: %s\n", error.what());
    return 1;
  }
  return 0;
}
