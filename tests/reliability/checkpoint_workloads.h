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
  // Writes one more file of the same kind into `dir`, of other examples,
  // under a name that sorts after the data set's (`number` makes it
  // unique).
  void (*write_another)(const std::string& dir, int number);
  // Writes a file of damaged input that the pipeline skips and counts,
  // named to sort before the data set's.
  void (*write_damaged)(const std::string& dir);
  // Whether a resumed run reads files new since the checkpoint (lc0's
  // chunk pool does; arrow_source reads the checkpoint's data set only).
  bool resume_reads_new_files;
  // The elastic training test's reservoir, and the files of write_another
  // it adds so that every old rank is still in its first pass when it
  // checkpoints and every new rank has more of that pass left than its
  // reservoir holds.
  uint64_t elastic_reservoir;
  int elastic_more_files;
  // The batch field that names a training row across passes (RowIds):
  // empty for its bytes (lc0's positions are the same in every pass;
  // audio's random crops are not).
  std::string train_row_id;
};

// `config` with a reservoir of `size` (min_fill `min_fill`) and, for lc0,
// a chunk window that holds every chunk.
void SetReservoir(DataLoaderConfig& config, uint64_t size, uint64_t min_fill);

CheckpointWorkload Lc0Workload();
CheckpointWorkload AudioWorkload();
// Both, for INSTANTIATE_TEST_SUITE_P.
std::vector<CheckpointWorkload> CheckpointWorkloads();

// The message with which a new loader of `config` refuses to resume from
// `checkpoint`, or from every rank's `checkpoints`; "accepted" when it
// does not.
std::string Refusal(const DataLoaderConfig& config,
                    const std::string& checkpoint);
std::string Refusal(const DataLoaderConfig& config,
                    const std::vector<std::string>& checkpoints);

inline void PrintTo(const CheckpointWorkload& workload, std::ostream* out) {
  *out << workload.name;
}

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_RELIABILITY_CHECKPOINT_WORKLOADS_H_
