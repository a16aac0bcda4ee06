// The workloads the checkpoint tests run as whole pipelines, one fixture
// for both: lc0 (tars of games through the chunk pool and the frame
// sampler) and audio (Arrow files through arrow_source, the decoders and
// the shuffle buffer). Each writes a small data set into a directory and
// builds its deterministic train and eval configs over it.
//
//   const CheckpointWorkload& workload = GetParam();  // kWorkloads
//   workload.write(dir.path());
//   DataLoaderConfig config = workload.config(dir.path(), Pass::kTrain);
#ifndef SLUICE_TESTS_RELIABILITY_CHECKPOINT_WORKLOADS_H_
#define SLUICE_TESTS_RELIABILITY_CHECKPOINT_WORKLOADS_H_

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "proto/data_loader_config.pb.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice::testing {

enum class Pass { kTrain, kEval };

struct CheckpointWorkload {
  std::string name;  // "lc0", "audio": the test-name suffix
  // Writes the data set's files into directory `dir`.
  void (*write)(const std::string& dir);
  // The deterministic pipeline over `dir` (2 threads, parallelism 2).
  DataLoaderConfig (*config)(const std::string& dir, Pass pass);
  // Train batches over which the tests compare runs: more than a pass for
  // audio, so that runs cross passes.
  size_t train_batches;
};

CheckpointWorkload Lc0Workload();
CheckpointWorkload AudioWorkload();
// Both, for INSTANTIATE_TEST_SUITE_P.
std::vector<CheckpointWorkload> CheckpointWorkloads();

// The skips counted under `reason` by every stage, in total.
uint64_t SkipsCounted(const DataLoaderMetricsProto& metrics,
                      const std::string& reason);

inline void PrintTo(const CheckpointWorkload& workload, std::ostream* out) {
  *out << workload.name;
}

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_RELIABILITY_CHECKPOINT_WORKLOADS_H_
