#include "bindings/cli/arrow_data.h"

#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <utility>

#include "absl/strings/str_format.h"
#include "asio/co_spawn.hpp"
#include "asio/use_future.hpp"
#include "bindings/cli/flags.h"
#include "engine/executor.h"
#include "engine/stable_hash.h"
#include "io/arrow/arrow_file_reader.h"
#include "io/arrow/arrow_file_writer.h"

namespace sluice::cli {
namespace {

namespace arrow = io::arrow;

// Writes rows [first, first + rows) into one file.
absl::Status WriteOneFile(const std::string& path, int64_t first, int64_t rows,
                          const ArrowDatasetOptions& options,
                          ArrowDataset& dataset) {
  absl::StatusOr<std::unique_ptr<arrow::ArrowFileWriter>> writer =
      arrow::ArrowFileWriter::Create(
          path, {arrow::BinaryColumn("blob"),
                 arrow::Float32VectorColumn("embedding", kArrowEmbeddingSize),
                 arrow::Int64Column("label")});
  if (!writer.ok()) return writer.status();
  std::vector<int32_t> offsets;
  std::vector<std::byte> blob;
  std::vector<float> embedding;
  std::vector<int64_t> labels;
  for (int64_t start = 0; start < rows; start += options.rows_per_batch) {
    const int64_t n = std::min(options.rows_per_batch, rows - start);
    offsets.assign(1, 0);
    blob.resize(n * options.row_bytes);
    embedding.resize(n * kArrowEmbeddingSize);
    labels.resize(n);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t row = first + start + r;
      StableRandom random(HashCombine(options.seed, row));
      std::byte* bytes = blob.data() + r * options.row_bytes;
      for (int64_t b = 0; b < options.row_bytes; b += 8) {
        const uint64_t word = random.Next();
        std::memcpy(bytes + b, &word,
                    std::min<int64_t>(8, options.row_bytes - b));
      }
      offsets.push_back(static_cast<int32_t>((r + 1) * options.row_bytes));
      for (int k = 0; k < kArrowEmbeddingSize; ++k) {
        embedding[r * kArrowEmbeddingSize + k] =
            static_cast<float>(row) +
            static_cast<float>(k) / kArrowEmbeddingSize;
      }
      labels[r] = row % 1000;
    }
    absl::Status status =
        (*writer)->WriteRecordBatch(n, {{.offsets = offsets, .bytes = blob},
                                        {.float32 = embedding},
                                        {.int64 = labels}});
    if (!status.ok()) return status;
    ++dataset.record_batches;
  }
  if (absl::Status status = (*writer)->Finish(); !status.ok()) return status;
  dataset.file_bytes += (*writer)->bytes_written();
  dataset.rows += rows;
  dataset.paths.push_back(path);
  return absl::OkStatus();
}

asio::awaitable<absl::StatusOr<ArrowReadResult>> ReadAll(
    io::AsyncFileReader& reader, std::vector<std::string> paths) {
  ArrowReadResult result;
  std::vector<std::byte> buffer;
  for (const std::string& path : paths) {
    absl::StatusOr<std::unique_ptr<arrow::ArrowFileReader>> file =
        co_await arrow::ArrowFileReader::Open(reader, path);
    if (!file.ok()) co_return file.status();
    for (int i = 0; i < (*file)->num_record_batches(); ++i) {
      absl::StatusOr<arrow::RecordBatch> batch =
          co_await (*file)->ReadRecordBatch(i, std::move(buffer));
      if (!batch.ok()) co_return batch.status();
      result.rows += batch->num_rows();
      ++result.record_batches;
      buffer = std::move(*batch).TakeBuffer();
    }
    result.bytes += std::filesystem::file_size(path);
  }
  co_return result;
}

}  // namespace

absl::StatusOr<ArrowDataset> WriteArrowDataset(
    const ArrowDatasetOptions& options) {
  if (options.rows < 1 || options.files < 1 || options.rows_per_batch < 1 ||
      options.row_bytes < 0) {
    return absl::InvalidArgumentError(
        "rows, files and rows per batch must be at least 1");
  }
  if (options.row_bytes * options.rows_per_batch > (int64_t{1} << 31) - 1) {
    return absl::InvalidArgumentError(
        "row bytes x rows per batch must stay under 2 GiB (32-bit offsets)");
  }
  std::error_code error;
  std::filesystem::create_directories(options.dir, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrFormat("%s: %s", options.dir, error.message()));
  }
  ArrowDataset dataset;
  for (int64_t f = 0; f < options.files; ++f) {
    const int64_t first = options.rows * f / options.files;
    const int64_t end = options.rows * (f + 1) / options.files;
    const std::string path =
        (std::filesystem::path(options.dir) /
         absl::StrFormat("data-%05d-of-%05d.arrow", f + 1, options.files))
            .string();
    if (absl::Status status =
            WriteOneFile(path, first, end - first, options, dataset);
        !status.ok()) {
      return status;
    }
  }
  return dataset;
}

bool IsArrowFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, io::arrow::kArrowFileMagicBytes> head{};
  return in.read(head.data(), head.size()) &&
         io::arrow::IsArrowFileStart(std::as_bytes(std::span(head)));
}

absl::StatusOr<ArrowReadResult> MeasureArrowRead(
    const std::vector<std::string>& paths, bool use_io_uring) {
  Executor executor({.threads = 1, .use_io_uring = use_io_uring});
  executor.Start();
  const auto start = std::chrono::steady_clock::now();
  std::future<absl::StatusOr<ArrowReadResult>> done = asio::co_spawn(
      executor.get(), ReadAll(executor.file_reader(), paths), asio::use_future);
  absl::StatusOr<ArrowReadResult> result = done.get();
  const std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - start;
  executor.Stop();
  if (result.ok()) result->seconds = elapsed.count();
  return result;
}

int RunGenArrowCommand(const std::vector<std::string>& args, std::ostream& out,
                       std::ostream& err) {
  constexpr char kUsage[] =
      "usage: sluice gen arrow DIR --rows N [--row-bytes B] [--files F]\n"
      "                        [--rows-per-batch R] [--seed S]\n"
      "\n"
      "Writes N synthetic rows into F Arrow IPC files\n"
      "DIR/data-0000N-of-0000F.arrow (uncompressed file format): \"blob\"\n"
      "binary of B bytes, \"embedding\" fixed_size_list<float32, 256> (1 "
      "KiB)\n"
      "and \"label\" int64, in record batches of R rows. The same seed "
      "writes\n"
      "the same bytes.\n"
      "\n"
      "  --rows N            rows to write (required)\n"
      "  --row-bytes B       bytes of each blob (default 1024)\n"
      "  --files F           files (default 1)\n"
      "  --rows-per-batch R  rows per record batch (default 1024)\n"
      "  --seed S            random seed (default 1)\n";
  const auto usage_error = [&](absl::string_view message) {
    err << "sluice gen: " << message << " (see sluice gen arrow --help)\n";
    return 2;
  };
  absl::StatusOr<ParsedArgs> parsed =
      ParseArgs(args, {"rows", "row-bytes", "files", "rows-per-batch", "seed"});
  if (!parsed.ok()) return usage_error(parsed.status().message());
  if (parsed->help) {
    out << kUsage;
    return 0;
  }
  if (parsed->positional.size() != 2) return usage_error("expected arrow DIR");
  if (!parsed->flags.contains("rows")) return usage_error("--rows is required");
  constexpr int64_t kMax = int64_t{1} << 40;
  absl::StatusOr<int64_t> rows = IntFlag(*parsed, "rows", 0, 1, kMax);
  absl::StatusOr<int64_t> row_bytes =
      IntFlag(*parsed, "row-bytes", 1024, 0, int64_t{1} << 30);
  absl::StatusOr<int64_t> files = IntFlag(*parsed, "files", 1, 1, 99999);
  absl::StatusOr<int64_t> per_batch =
      IntFlag(*parsed, "rows-per-batch", 1024, 1, int64_t{1} << 24);
  absl::StatusOr<int64_t> seed = IntFlag(*parsed, "seed", 1, 0, kMax);
  for (const auto* value : {&rows, &row_bytes, &files, &per_batch, &seed}) {
    if (!value->ok()) return usage_error(value->status().message());
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ArrowDataset> written =
      WriteArrowDataset({.dir = parsed->positional[1],
                         .rows = *rows,
                         .row_bytes = *row_bytes,
                         .files = *files,
                         .rows_per_batch = *per_batch,
                         .seed = static_cast<uint64_t>(*seed)});
  if (!written.ok()) {
    err << "sluice gen: " << written.status().message() << "\n";
    return written.status().code() == absl::StatusCode::kInvalidArgument ? 2
                                                                         : 1;
  }
  const std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - start;
  constexpr size_t kListed = 10;
  for (size_t i = 0; i < written->paths.size() && i < kListed; ++i) {
    out << "wrote " << written->paths[i] << "\n";
  }
  if (written->paths.size() > kListed) {
    out << "... and " << written->paths.size() - kListed << " more\n";
  }
  out << absl::StrFormat(
      "%d files, %d rows, %d record batches, %d bytes in %.2f s\n",
      written->paths.size(), written->rows, written->record_batches,
      written->file_bytes, elapsed.count());
  return 0;
}

}  // namespace sluice::cli
