// Batch-queue benchmark: BatchFileReader throughput (batches/s, GB/s) on
// batch files in the page cache, against the raw read rate of the same
// files (pread of each whole file into one buffer). The "reader" row is the
// queue mode, which deletes each file once consumed (freeing its page cache
// costs CPU, on another thread); the "no delete" row reads the same files
// as a legacy data set, which is never deleted: the read path alone.
//
//   build/bench/batch_queue_benchmark [--files N] [--batches_per_file N]
//                                     [--positions N] [--rounds N]
//
// Prints a table and one JSON line (prefixed "JSON ").
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/data_loader.h"
#include "io/batch_file_meta.h"
#include "io/batch_queue_layout.h"
#include "stages/batch_queue/internal/batch_file.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/stage_factory.h"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int files = 16;
  int batches_per_file = 4;
  int positions = 1024;
  int rounds = 5;
};

// Writes the queue's files (zero-filled batches); returns the bytes.
uint64_t WriteQueue(const std::string& root, const Options& options) {
  const std::string dir = QueueDir(root, "train");
  std::filesystem::create_directories(dir);
  std::vector<TypedBatch> group;
  for (int b = 0; b < options.batches_per_file; ++b) {
    TypedBatch batch =
        std::move(*lc0::TensorBatch::Create(options.positions)).ToTypedBatch();
    for (const BatchTensor& tensor : batch.tensors()) {
      std::memset(tensor.data, 0, tensor.bytes);
    }
    group.push_back(std::move(batch));
  }
  uint64_t bytes = 0;
  for (int f = 1; f <= options.files; ++f) {
    if (!batch_queue::WriteBatchFile(dir, "train", f, 1000, group, &bytes)
             .ok()) {
      std::fprintf(stderr, "cannot write %s\n", dir.c_str());
      std::exit(1);
    }
  }
  return bytes;
}

// Seconds to pread every file of the queue whole into one buffer.
double RawRead(const std::string& root) {
  const std::string dir = QueueDir(root, "train");
  std::vector<char> buffer;
  const std::vector<QueueFile> files = *ListQueueFiles(dir);
  const auto start = Clock::now();
  for (const QueueFile& file : files) {
    const std::string path = absl::StrCat(dir, "/", file.name);
    const int fd = open(path.c_str(), O_RDONLY);
    const auto size = std::filesystem::file_size(path);
    buffer.resize(size);
    for (size_t done = 0; done < size;) {
      const ssize_t n = pread(fd, buffer.data() + done, size - done, done);
      if (n <= 0) std::exit(1);
      done += n;
    }
    close(fd);
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Moves the queue's files to the root as a legacy data set.
void MakeLegacy(const std::string& root) {
  const std::string dir = QueueDir(root, "train");
  int index = 0;
  const std::vector<QueueFile> files = *ListQueueFiles(dir);
  for (const QueueFile& file : files) {
    std::filesystem::rename(
        absl::StrCat(dir, "/", file.name),
        absl::StrCat(root, "/train_batches_", 1000 + index++, ".safetensors"));
  }
  std::filesystem::remove_all(root + "/queue");
}

// Seconds for a BatchFileReader to emit (and, in queue mode, delete) every
// batch.
double ReaderRead(const std::string& root, int batches) {
  DataLoader loader(CreateStage);
  DataLoaderConfig config;
  StageConfig* stage = config.add_stage();
  stage->set_name("reader");
  stage->mutable_batch_file_reader()->set_root(root);
  stage->mutable_batch_file_reader()->set_split("train");
  stage->mutable_batch_file_reader()->set_poll_interval_ms(1);
  loader.Configure(config);
  const auto start = Clock::now();
  loader.Start();
  for (int i = 0; i < batches; ++i) {
    if (!loader.GetNext<TypedBatch>()) std::exit(1);
  }
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  loader.Stop();
  return seconds;
}

int Run(const Options& options) {
  const std::string root =
      (std::filesystem::temp_directory_path() / "sluice_bq_bench").string();
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  const DatasetMeta meta{
      .dataset_name = "bench",
      .training_type = "LC0",
      .batch_size = options.positions,
      .batch_schema = batch_queue::BatchSchemaOf(
          std::move(*lc0::TensorBatch::Create(1)).ToTypedBatch())};
  if (!WriteDatasetMeta(root, meta).ok()) return 1;
  const int batches = options.files * options.batches_per_file;
  double raw = 1e9, reader = 1e9, no_delete = 1e9;
  uint64_t bytes = 0;
  for (int round = 0; round < options.rounds; ++round) {
    bytes = WriteQueue(root, options);
    raw = std::min(raw, RawRead(root));
    reader = std::min(reader, ReaderRead(root, batches));
    WriteQueue(root, options);
    MakeLegacy(root);
    no_delete = std::min(no_delete, ReaderRead(root, batches));
    for (const auto& entry : std::filesystem::directory_iterator(root)) {
      if (entry.path().extension() == ".safetensors") {
        std::filesystem::remove(entry.path());
      }
    }
  }
  std::filesystem::remove_all(root);
  const double gb = static_cast<double>(bytes) / 1e9;
  std::printf("%-9s %12s %10s\n", "path", "batches/s", "GB/s");
  std::printf("%-9s %12.1f %10.2f\n", "raw", batches / raw, gb / raw);
  std::printf("%-9s %12.1f %10.2f\n", "reader", batches / reader, gb / reader);
  std::printf("%-9s %12.1f %10.2f\n", "no delete", batches / no_delete,
              gb / no_delete);
  std::printf("reader / raw = %.0f %%, no delete / raw = %.0f %%\n",
              100.0 * raw / reader, 100.0 * raw / no_delete);
  std::printf(
      "JSON {\"bench\":\"batch_queue\",\"files\":%d,\"batches\":%d,"
      "\"positions\":%d,\"bytes\":%llu,\"raw_gbps\":%.3f,"
      "\"reader_gbps\":%.3f,\"reader_batches_per_s\":%.1f,\"ratio\":%.3f,"
      "\"no_delete_ratio\":%.3f}\n",
      options.files, batches, options.positions,
      static_cast<unsigned long long>(bytes), gb / raw, gb / reader,
      batches / reader, raw / reader, raw / no_delete);
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  sluice::Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--files") options.files = value;
    if (flag == "--batches_per_file") options.batches_per_file = value;
    if (flag == "--positions") options.positions = value;
    if (flag == "--rounds") options.rounds = value;
  }
  return sluice::Run(options);
}
