#include "bindings/cli/audio_data.h"

#include <chrono>
#include <filesystem>
#include <limits>
#include <memory>
#include <span>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "bindings/cli/flags.h"
#include "engine/stable_hash.h"
#include "io/arrow/arrow_file_writer.h"

namespace sluice::cli {
namespace {

namespace arrow = io::arrow;

constexpr int64_t kMaxClasses = 1000;

// One record batch's columns, reused between batches.
struct BatchColumns {
  std::vector<int32_t> audio_offsets;
  std::vector<std::byte> audio;
  std::vector<int32_t> path_offsets;
  std::string paths;
  std::vector<int64_t> labels;
  std::vector<float> durations;
  std::vector<uint8_t> duration_valid;
  bool any_null = false;

  void Clear(int64_t rows) {
    audio_offsets.assign(1, 0);
    audio.clear();
    path_offsets.assign(1, 0);
    paths.clear();
    labels.clear();
    durations.clear();
    duration_valid.assign((rows + 7) / 8, 0);
    any_null = false;
  }
};

// Appends row `row` (its clip, good or damaged) to `batch`.
absl::Status AddRow(int64_t row, const AudioDatasetOptions& options,
                    const std::map<int64_t, CorruptKind>& corrupt,
                    BatchColumns& batch, AudioDataset& dataset) {
  const ClipSpec spec = DrawClipSpec(options.seed, row, options.classes);
  const auto damaged = corrupt.find(row);
  absl::StatusOr<std::vector<std::byte>> clip =
      damaged != corrupt.end() ? MakeCorruptClip(damaged->second, spec)
                               : EncodeClip(spec, SynthesizeClip(spec));
  if (!clip.ok()) return clip.status();
  const AudioEncoding encoding = damaged != corrupt.end()
                                     ? ClaimedEncoding(damaged->second, spec)
                                     : spec.encoding;
  if (batch.audio.size() + clip->size() >
      static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return absl::InvalidArgumentError(
        "a record batch's clips pass 2 GiB (32-bit offsets): use fewer rows "
        "per batch");
  }
  const int64_t index = static_cast<int64_t>(batch.labels.size());
  batch.audio.insert(batch.audio.end(), clip->begin(), clip->end());
  batch.audio_offsets.push_back(static_cast<int32_t>(batch.audio.size()));
  batch.paths +=
      absl::StrFormat("clip-%06d.%s", row, AudioEncodingExtension(encoding));
  batch.path_offsets.push_back(static_cast<int32_t>(batch.paths.size()));
  batch.labels.push_back(spec.label);
  if (damaged != corrupt.end()) {
    batch.durations.push_back(0);
    batch.any_null = true;
    ++dataset.corrupt_per_kind[static_cast<int>(damaged->second)];
  } else {
    batch.durations.push_back(static_cast<float>(spec.seconds()));
    batch.duration_valid[index / 8] |= 1u << (index % 8);
    ++dataset.good_per_encoding[static_cast<int>(spec.encoding)];
    dataset.audio_seconds += spec.seconds();
  }
  ++dataset.clips_per_class[spec.label];
  dataset.audio_bytes += static_cast<int64_t>(clip->size());
  return absl::OkStatus();
}

// Writes rows [first, first + rows) into one file.
absl::Status WriteOneFile(const std::string& path, int64_t first, int64_t rows,
                          const AudioDatasetOptions& options,
                          const std::map<int64_t, CorruptKind>& corrupt,
                          AudioDataset& dataset) {
  const arrow::WriterColumn audio_column =
      options.hf_audio_struct
          ? arrow::StructColumn("audio", {arrow::BinaryColumn("bytes"),
                                          arrow::Utf8Column("path")})
          : arrow::BinaryColumn("audio");
  absl::StatusOr<std::unique_ptr<arrow::ArrowFileWriter>> writer =
      arrow::ArrowFileWriter::Create(
          path, {audio_column, arrow::Int64Column("label"),
                 arrow::Float32Column("duration_seconds")});
  if (!writer.ok()) return writer.status();
  BatchColumns batch;
  for (int64_t start = 0; start < rows; start += options.rows_per_batch) {
    const int64_t n = std::min(options.rows_per_batch, rows - start);
    batch.Clear(n);
    for (int64_t r = 0; r < n; ++r) {
      if (absl::Status status =
              AddRow(first + start + r, options, corrupt, batch, dataset);
          !status.ok()) {
        return status;
      }
    }
    const arrow::ColumnValues clips = {.offsets = batch.audio_offsets,
                                       .bytes = batch.audio};
    const arrow::ColumnValues audio =
        options.hf_audio_struct
            ? arrow::ColumnValues{.children = {clips,
                                               {.offsets = batch.path_offsets,
                                                .bytes = std::as_bytes(
                                                    std::span(batch.paths))}}}
            : clips;
    const std::span<const uint8_t> duration_valid =
        batch.any_null ? std::span<const uint8_t>(batch.duration_valid)
                       : std::span<const uint8_t>();
    if (absl::Status status = (*writer)->WriteRecordBatch(
            n, {audio,
                {.int64 = batch.labels},
                {.validity = duration_valid, .float32 = batch.durations}});
        !status.ok()) {
      return status;
    }
    ++dataset.record_batches;
  }
  if (absl::Status status = (*writer)->Finish(); !status.ok()) return status;
  dataset.file_bytes += (*writer)->bytes_written();
  dataset.clips += rows;
  dataset.paths.push_back(path);
  return absl::OkStatus();
}

}  // namespace

std::map<int64_t, CorruptKind> CorruptRows(const AudioDatasetOptions& options) {
  std::map<int64_t, CorruptKind> rows;
  if (options.corrupt_every < 1 || options.clips < 1) return rows;
  int64_t count = options.clips / options.corrupt_every;
  if (count == 0 && options.clips >= 20) count = 1;
  StableRandom random(HashCombine(options.seed, Fnv1a64("corrupt rows")));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t begin = options.clips * i / count;
    const int64_t end = options.clips * (i + 1) / count;
    rows[begin + static_cast<int64_t>(random.Below(end - begin))] =
        static_cast<CorruptKind>(i % kCorruptKinds);
  }
  return rows;
}

int64_t AudioDataset::corrupt_clips() const {
  int64_t total = 0;
  for (int64_t n : corrupt_per_kind) total += n;
  return total;
}

absl::StatusOr<AudioDataset> WriteAudioDataset(
    const AudioDatasetOptions& options) {
  if (options.clips < 1 || options.classes < 1 || options.files < 1 ||
      options.rows_per_batch < 1 || options.corrupt_every < 0) {
    return absl::InvalidArgumentError(
        "clips, classes, files and rows per batch must be at least 1");
  }
  if (options.classes > kMaxClasses) {
    return absl::InvalidArgumentError(
        absl::StrFormat("at most %d classes", kMaxClasses));
  }
  std::error_code error;
  std::filesystem::create_directories(options.dir, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrFormat("%s: %s", options.dir, error.message()));
  }
  const std::map<int64_t, CorruptKind> corrupt = CorruptRows(options);
  AudioDataset dataset;
  dataset.clips_per_class.assign(options.classes, 0);
  for (int64_t f = 0; f < options.files; ++f) {
    const int64_t first = options.clips * f / options.files;
    const int64_t end = options.clips * (f + 1) / options.files;
    const std::string path =
        (std::filesystem::path(options.dir) /
         absl::StrFormat("data-%05d-of-%05d.arrow", f + 1, options.files))
            .string();
    if (absl::Status status =
            WriteOneFile(path, first, end - first, options, corrupt, dataset);
        !status.ok()) {
      return status;
    }
  }
  return dataset;
}

int RunGenAudioCommand(const std::vector<std::string>& args, std::ostream& out,
                       std::ostream& err) {
  constexpr char kUsage[] =
      "usage: sluice gen audio DIR --clips N [--classes K] [--files F]\n"
      "                        [--seed S] [--rows-per-batch R]\n"
      "                        [--corrupt-every C] [--hf-audio-struct]\n"
      "\n"
      "Writes N synthetic labelled audio clips into F Arrow IPC files\n"
      "DIR/data-0000N-of-0000F.arrow: \"audio\" binary (the encoded clip),\n"
      "\"label\" int64 (the class) and \"duration_seconds\" float32. Class k\n"
      "is a tone, a chirp, a noise band or a click train (k % 4) with\n"
      "parameters from k; clips last 0.5-3 s at 8, 16, 22.05, 44.1 or 48 "
      "kHz,\n"
      "mono or stereo, encoded as 16-bit WAV, float WAV, FLAC or Ogg "
      "Vorbis.\n"
      "One clip in C is damaged (random bytes, truncated FLAC, empty, or a\n"
      "WAV whose header claims more frames than it holds); its duration is\n"
      "null. The same seed writes the same bytes.\n"
      "\n"
      "  --clips N           clips to write (required)\n"
      "  --classes K         classes, 1 to 1000 (default 8)\n"
      "  --files F           files (default 1)\n"
      "  --seed S            random seed (default 1)\n"
      "  --rows-per-batch R  rows per record batch (default 256)\n"
      "  --corrupt-every C   damage one clip in C, at least one of 20 or\n"
      "                      more; 0 for none (default 100)\n"
      "  --hf-audio-struct   write \"audio\" as Hugging Face's Audio layout,\n"
      "                      struct<bytes: binary, path: string>\n";
  const auto usage_error = [&](absl::string_view message) {
    err << "sluice gen: " << message << " (see sluice gen audio --help)\n";
    return 2;
  };
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(
      args,
      {"clips", "classes", "files", "seed", "rows-per-batch", "corrupt-every"},
      {"hf-audio-struct"});
  if (!parsed.ok()) return usage_error(parsed.status().message());
  if (parsed->help) {
    out << kUsage;
    return 0;
  }
  if (parsed->positional.size() != 2) return usage_error("expected audio DIR");
  if (!parsed->flags.contains("clips")) {
    return usage_error("--clips is required");
  }
  constexpr int64_t kMax = int64_t{1} << 40;
  absl::StatusOr<int64_t> clips = IntFlag(*parsed, "clips", 0, 1, kMax);
  absl::StatusOr<int64_t> classes =
      IntFlag(*parsed, "classes", 8, 1, kMaxClasses);
  absl::StatusOr<int64_t> files = IntFlag(*parsed, "files", 1, 1, 99999);
  absl::StatusOr<int64_t> seed = IntFlag(*parsed, "seed", 1, 0, kMax);
  absl::StatusOr<int64_t> per_batch =
      IntFlag(*parsed, "rows-per-batch", 256, 1, int64_t{1} << 20);
  absl::StatusOr<int64_t> corrupt_every =
      IntFlag(*parsed, "corrupt-every", 100, 0, kMax);
  for (const auto* value :
       {&clips, &classes, &files, &seed, &per_batch, &corrupt_every}) {
    if (!value->ok()) return usage_error(value->status().message());
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<AudioDataset> written = WriteAudioDataset(
      {.dir = parsed->positional[1],
       .clips = *clips,
       .classes = *classes,
       .files = *files,
       .rows_per_batch = *per_batch,
       .seed = static_cast<uint64_t>(*seed),
       .corrupt_every = *corrupt_every,
       .hf_audio_struct = parsed->flags.contains("hf-audio-struct")});
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
      "%d files, %d clips of %d classes, %d record batches, %d bytes in "
      "%.2f s\n",
      written->paths.size(), written->clips, *classes, written->record_batches,
      written->file_bytes, elapsed.count());
  out << absl::StrFormat("%d good clips, %.1f s of audio, %d encoded bytes:",
                         written->clips - written->corrupt_clips(),
                         written->audio_seconds, written->audio_bytes);
  for (int e = 0; e < kAudioEncodings; ++e) {
    out << absl::StrFormat("%s %s %d", e == 0 ? "" : ",",
                           AudioEncodingName(static_cast<AudioEncoding>(e)),
                           written->good_per_encoding[e]);
  }
  out << "\n" << written->corrupt_clips() << " corrupt clips:";
  for (int k = 0; k < kCorruptKinds; ++k) {
    out << absl::StrFormat("%s %s %d", k == 0 ? "" : ",",
                           CorruptKindName(static_cast<CorruptKind>(k)),
                           written->corrupt_per_kind[k]);
  }
  out << "\nclips per class:";
  for (int64_t n : written->clips_per_class) out << " " << n;
  out << "\n";
  return 0;
}

}  // namespace sluice::cli
