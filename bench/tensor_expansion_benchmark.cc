// Per-position cost of tensor expansion (TensorExpander::Expand) for input
// formats 1 and 3, single core, on the golden fixtures' records: filling a
// whole 1024-position batch (37 MB, so bound by memory bandwidth) and
// refilling the first 8 slots (cache-resident: the compute cost). Prints a
// table, then one JSON line.
//
//   tensor_expansion_benchmark [golden_dir]
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/gzip.h"
#include "stages/lc0/format/record_upconvert.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/lc0/format/tensor_expansion.h"

namespace {

using namespace sluice::lc0;  // NOLINT(build/namespaces): a small program

constexpr size_t kBatch = 1024;

std::vector<V6TrainingRecord> LoadRecords(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  absl::StatusOr<std::string> chunk = sluice::io::Gunzip(ss.str(), 64 << 20);
  std::vector<V6TrainingRecord> records;
  if (!chunk.ok()) return records;
  for (size_t off = 0; off + kV6RecordSize <= chunk->size();
       off += kV6RecordSize) {
    records.emplace_back();
    UpconvertToV6(std::string_view(*chunk).substr(off, kV6RecordSize),
                  RecordVersion::kV6, &records.back());
  }
  return records;
}

// Expands records into the first `slots` slots of `batch` until a second has
// passed; returns ns/position.
double Measure(const std::vector<V6TrainingRecord>& records,
               const TensorExpander& expander, TensorBatch* batch,
               size_t slots) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  size_t positions = 0;
  double seconds = 0;
  do {
    for (size_t slot = 0; slot < slots; ++slot) {
      expander.Expand(records[slot % records.size()], batch, slot);
    }
    positions += slots;
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
  } while (seconds < 1.0);
  return seconds * 1e9 / positions;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "tests/data/golden";
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(kBatch);
  if (!batch.ok()) return 1;
  std::printf("%-8s %16s %10s %16s\n", "format", "ns/pos batch1024", "MB/s out",
              "ns/pos hot (8)");
  std::string json = "{\"benchmark\":\"tensor_expansion\"";
  const double bytes_per_position = (112 * 64 + 1858 + 7) * sizeof(float);
  for (const auto& [format, fixture] :
       {std::pair<uint32_t, const char*>{1, "v6_fmt1_a"}, {3, "v6_fmt3"}}) {
    const std::vector<V6TrainingRecord> records =
        LoadRecords(dir + "/" + fixture + ".gz");
    absl::StatusOr<TensorExpander> expander = TensorExpander::Create(format);
    if (records.empty() || !expander.ok()) {
      std::fprintf(stderr, "cannot load %s/%s.gz\n", dir.c_str(), fixture);
      return 1;
    }
    const double ns = Measure(records, *expander, &*batch, kBatch);
    const double hot_ns = Measure(records, *expander, &*batch, 8);
    std::printf("%-8u %16.1f %10.0f %16.1f\n", format, ns,
                bytes_per_position / ns * 1e3, hot_ns);
    const std::string key = ",\"format" + std::to_string(format);
    json += key + "_ns_per_position\":" + std::to_string(ns) + key +
            "_hot_ns_per_position\":" + std::to_string(hot_ns);
  }
  std::printf("%s}\n", json.c_str());
  return 0;
}
