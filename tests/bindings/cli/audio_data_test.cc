#include "bindings/cli/audio_data.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "asio/io_context.hpp"
#include "bindings/cli/gen_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/arrow/arrow_file_reader.h"
#include "io/arrow/ipc_bytes.h"
#include "tests/bindings/cli/decoded_clip.h"
#include "tests/testing/coroutine_runner.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice::cli {
namespace {

namespace fs = std::filesystem;
using ::sluice::testing::DecodeClip;
using ::sluice::testing::DecodedClip;
using ::testing::HasSubstr;

std::vector<std::byte> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  const auto* data = reinterpret_cast<const std::byte*>(bytes.data());
  return {data, data + bytes.size()};
}

// One row as read back from the files.
struct Row {
  std::vector<std::byte> audio;
  std::string path;  // hf_audio_struct only
  int64_t label = 0;
  bool has_duration = false;
  float duration = 0;
};

// Every row of `paths`, in order, through io::arrow's in-memory parser.
std::vector<Row> ReadRows(const std::vector<std::string>& paths,
                          int64_t* batches = nullptr) {
  std::vector<Row> rows;
  for (const std::string& path : paths) {
    const std::vector<std::byte> bytes = ReadAll(path);
    absl::StatusOr<io::arrow::IpcContents> contents =
        io::arrow::ReadIpcBytes(bytes, path);
    EXPECT_TRUE(contents.ok()) << contents.status();
    if (!contents.ok()) return rows;
    EXPECT_EQ(contents->schema.FieldIndex("label"), 1);
    EXPECT_EQ(contents->schema.FieldIndex("duration_seconds"), 2);
    for (const io::arrow::RecordBatch& batch : contents->batches) {
      if (batches != nullptr) ++*batches;
      const io::arrow::ArrayView& audio = batch.column(0);
      const bool nested = audio.type() == io::arrow::TypeId::kStruct;
      const io::arrow::ArrayView& clip = nested ? audio.child(0) : audio;
      for (int64_t r = 0; r < batch.num_rows(); ++r) {
        Row row;
        const std::span<const std::byte> value = clip.Binary(r);
        row.audio.assign(value.begin(), value.end());
        if (nested) row.path = std::string(audio.child(1).String(r));
        row.label = batch.column(1).Value<int64_t>(r);
        row.has_duration = !batch.column(2).IsNull(r);
        row.duration = batch.column(2).Value<float>(r);
        rows.push_back(std::move(row));
      }
    }
  }
  return rows;
}

TEST(GenAudioTest, CorruptRowsOnePerHundredAtLeastOneFromTwenty) {
  EXPECT_TRUE(CorruptRows({.clips = 19}).empty());
  EXPECT_EQ(CorruptRows({.clips = 20}).size(), 1u);
  EXPECT_EQ(CorruptRows({.clips = 250}).size(), 2u);
  EXPECT_TRUE(CorruptRows({.clips = 500, .corrupt_every = 0}).empty());
  EXPECT_EQ(CorruptRows({.clips = 30, .corrupt_every = 1}).size(), 30u);
  const std::map<int64_t, CorruptKind> rows =
      CorruptRows({.clips = 400, .seed = 3, .corrupt_every = 50});
  ASSERT_EQ(rows.size(), 8u);
  int i = 0;
  for (const auto& [row, kind] : rows) {
    EXPECT_GE(row, 50 * i);
    EXPECT_LT(row, 50 * (i + 1));
    EXPECT_EQ(kind, static_cast<CorruptKind>(i % kCorruptKinds));
    ++i;
  }
}

TEST(GenAudioTest, SameSeedWritesSameBytes) {
  sluice::testing::TempDir dir;
  const AudioDatasetOptions options = {.dir = dir / "a",
                                       .clips = 60,
                                       .files = 2,
                                       .seed = 4,
                                       .corrupt_every = 15,
                                       .hf_audio_struct = true};
  absl::StatusOr<AudioDataset> first = WriteAudioDataset(options);
  ASSERT_TRUE(first.ok()) << first.status();
  AudioDatasetOptions same = options;
  same.dir = dir / "b";
  absl::StatusOr<AudioDataset> second = WriteAudioDataset(same);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(first->paths.size(), 2u);
  for (size_t i = 0; i < first->paths.size(); ++i) {
    EXPECT_EQ(fs::path(first->paths[i]).filename(),
              fs::path(second->paths[i]).filename());
    EXPECT_TRUE(ReadAll(first->paths[i]) == ReadAll(second->paths[i]))
        << first->paths[i];
  }
  AudioDatasetOptions other = options;
  other.dir = dir / "c";
  other.seed = 5;
  absl::StatusOr<AudioDataset> third = WriteAudioDataset(other);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_FALSE(ReadAll(first->paths[0]) == ReadAll(third->paths[0]));
}

// Rows, labels, batches, durations, every encoding and every kind of damage,
// as the summary counts them and as the files hold them.
TEST(GenAudioTest, RowsLabelsEncodingsAndCorruptClips) {
  sluice::testing::TempDir dir;
  const AudioDatasetOptions options = {.dir = dir / "d",
                                       .clips = 120,
                                       .classes = 5,
                                       .files = 3,
                                       .rows_per_batch = 16,
                                       .seed = 9,
                                       .corrupt_every = 20};
  absl::StatusOr<AudioDataset> written = WriteAudioDataset(options);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->clips, 120);
  EXPECT_EQ(written->paths,
            (std::vector<std::string>{dir / "d/data-00001-of-00003.arrow",
                                      dir / "d/data-00002-of-00003.arrow",
                                      dir / "d/data-00003-of-00003.arrow"}));
  EXPECT_EQ(written->record_batches, 9);  // 40 rows per file: 16 + 16 + 8
  EXPECT_EQ(written->corrupt_clips(), 6);
  for (int k = 0; k < kCorruptKinds; ++k) {
    EXPECT_GE(written->corrupt_per_kind[k], 1) << k;
  }
  for (int e = 0; e < kAudioEncodings; ++e) {
    EXPECT_GE(written->good_per_encoding[e], 1) << e;
  }
  ASSERT_EQ(written->clips_per_class.size(), 5u);

  int64_t batches = 0;
  const std::vector<Row> rows = ReadRows(written->paths, &batches);
  ASSERT_EQ(rows.size(), 120u);
  EXPECT_EQ(batches, 9);
  const std::map<int64_t, CorruptKind> corrupt = CorruptRows(options);
  std::vector<int64_t> per_class(5);
  std::set<std::string> magics;
  double seconds = 0;
  for (int64_t r = 0; r < 120; ++r) {
    SCOPED_TRACE(r);
    const Row& row = rows[r];
    const ClipSpec spec = DrawClipSpec(9, r, 5);
    EXPECT_EQ(row.label, spec.label);
    ++per_class[row.label];
    EXPECT_EQ(row.has_duration, !corrupt.contains(r));
    if (!row.has_duration) continue;
    EXPECT_EQ(row.duration, static_cast<float>(spec.seconds()));
    seconds += spec.seconds();
    if (row.audio.size() >= 4) {
      magics.insert(
          std::string(reinterpret_cast<const char*>(row.audio.data()), 4) +
          (spec.encoding == AudioEncoding::kWavFloat ? "f" : ""));
    }
  }
  EXPECT_EQ(per_class, written->clips_per_class);
  EXPECT_NEAR(seconds, written->audio_seconds, 1e-6);
  EXPECT_EQ(magics, (std::set<std::string>{"RIFF", "RIFFf", "fLaC", "OggS"}));
}

// Hugging Face's Audio layout read back through ArrowFileReader: bytes and
// a path named after the row and the encoding.
TEST(GenAudioTest, HfAudioStructReadsBackWithBytesAndPath) {
  sluice::testing::TempDir dir;
  const AudioDatasetOptions options = {.dir = dir / "hf",
                                       .clips = 40,
                                       .classes = 3,
                                       .seed = 2,
                                       .hf_audio_struct = true};
  absl::StatusOr<AudioDataset> written = WriteAudioDataset(options);
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_EQ(written->paths.size(), 1u);
  asio::io_context io;
  io::AsyncFileReader reader(io, {.use_io_uring = false});
  sluice::testing::CoroutineRunner runner(io);
  io::arrow::Schema schema;
  std::vector<io::arrow::RecordBatch> batches;
  runner.Spawn([&]() -> asio::awaitable<void> {
    absl::StatusOr<std::unique_ptr<io::arrow::ArrowFileReader>> file =
        co_await io::arrow::ArrowFileReader::Open(reader, written->paths[0]);
    EXPECT_TRUE(file.ok()) << file.status();
    if (!file.ok()) co_return;
    schema = (*file)->schema();
    for (int i = 0; i < (*file)->num_record_batches(); ++i) {
      absl::StatusOr<io::arrow::RecordBatch> batch =
          co_await (*file)->ReadRecordBatch(i);
      EXPECT_TRUE(batch.ok()) << batch.status();
      if (batch.ok()) batches.push_back(*std::move(batch));
    }
  });
  runner.RunToCompletion();
  ASSERT_EQ(schema.fields.size(), 3u);
  const io::arrow::Field& audio = schema.fields[0];
  EXPECT_EQ(audio.name, "audio");
  ASSERT_EQ(audio.type, io::arrow::TypeId::kStruct);
  ASSERT_EQ(audio.children.size(), 2u);
  EXPECT_EQ(audio.children[0].name, "bytes");
  EXPECT_EQ(audio.children[0].type, io::arrow::TypeId::kBinary);
  EXPECT_EQ(audio.children[1].name, "path");
  EXPECT_EQ(audio.children[1].type, io::arrow::TypeId::kUtf8);
  EXPECT_EQ(schema.fields[1].type, io::arrow::TypeId::kInt64);
  EXPECT_EQ(schema.fields[2].type, io::arrow::TypeId::kFloat32);
  ASSERT_EQ(batches.size(), 1u);
  const io::arrow::ArrayView& column = batches[0].column(0);
  const std::map<int64_t, CorruptKind> corrupt = CorruptRows(options);
  ASSERT_EQ(corrupt.size(), 1u);
  for (int64_t r = 0; r < 40; ++r) {
    SCOPED_TRACE(r);
    const ClipSpec spec = DrawClipSpec(2, r, 3);
    const auto damaged = corrupt.find(r);
    const AudioEncoding encoding = damaged == corrupt.end()
                                       ? spec.encoding
                                       : ClaimedEncoding(damaged->second, spec);
    EXPECT_FALSE(column.IsNull(r));
    EXPECT_EQ(column.child(1).String(r),
              absl::StrFormat("clip-%06d.%s", r,
                              std::string(AudioEncodingExtension(encoding))));
    if (damaged == corrupt.end()) {
      EXPECT_TRUE(DecodeClip(column.child(0).Binary(r)).opened);
    }
  }
}

// Every good clip decodes with libsndfile to its spec: the stated sample
// rate, channels and duration (0.5 to 3 s), all frames without an error.
TEST(GenAudioTest, GoodClipsDecodeWithLibsndfile) {
  sluice::testing::TempDir dir;
  const AudioDatasetOptions options = {
      .dir = dir / "decode", .clips = 100, .classes = 8, .seed = 13};
  absl::StatusOr<AudioDataset> written = WriteAudioDataset(options);
  ASSERT_TRUE(written.ok()) << written.status();
  const std::vector<Row> rows = ReadRows(written->paths);
  ASSERT_EQ(rows.size(), 100u);
  int good = 0;
  for (int64_t r = 0; r < 100; ++r) {
    if (!rows[r].has_duration) continue;
    SCOPED_TRACE(r);
    const ClipSpec spec = DrawClipSpec(13, r, 8);
    const DecodedClip clip = DecodeClip(rows[r].audio);
    ASSERT_TRUE(clip.opened);
    EXPECT_EQ(clip.sample_rate, spec.sample_rate);
    EXPECT_EQ(clip.channels, spec.channels);
    EXPECT_EQ(clip.frames, spec.frames);
    EXPECT_EQ(clip.frames_read, spec.frames);
    EXPECT_FALSE(clip.read_error);
    const double seconds = static_cast<double>(clip.frames) / clip.sample_rate;
    EXPECT_GE(seconds, 0.5);
    EXPECT_LE(seconds, 3.0);
    EXPECT_NEAR(rows[r].duration, seconds, 1e-6);
    ++good;
  }
  EXPECT_EQ(good, 99);
}

TEST(GenAudioTest, CommandPrintsASummary) {
  sluice::testing::TempDir dir;
  std::ostringstream out, err;
  ASSERT_EQ(RunGenCommand({"audio", dir / "cli", "--clips", "40", "--classes",
                           "4", "--files", "2", "--seed", "3",
                           "--corrupt-every", "10", "--hf-audio-struct"},
                          out, err),
            0)
      << err.str();
  EXPECT_EQ(err.str(), "");
  EXPECT_THAT(out.str(),
              HasSubstr("wrote " + dir / "cli/data-00002-of-00002.arrow"));
  EXPECT_THAT(out.str(), HasSubstr("2 files, 40 clips of 4 classes"));
  EXPECT_THAT(out.str(), HasSubstr("36 good clips"));
  EXPECT_THAT(out.str(),
              HasSubstr("4 corrupt clips: random-bytes 1, truncated-flac 1, "
                        "empty 1, wav-frame-count-lie 1"));
  EXPECT_THAT(out.str(), HasSubstr("ogg-vorbis"));
}

// Usage errors: exit code 2, one line naming the flag, nothing written.
TEST(GenAudioTest, UsageErrorsNameTheFlag) {
  sluice::testing::TempDir dir;
  const std::string target = dir / "never";
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"audio", target}, "--clips is required"},
      {{"audio", target, "--clips", "0"}, "--clips"},
      {{"audio", target, "--clips", "ten"}, "--clips"},
      {{"audio", target, "--clips", "10", "--classes", "0"}, "--classes"},
      {{"audio", target, "--clips", "10", "--classes", "1001"}, "--classes"},
      {{"audio", target, "--clips", "10", "--files", "0"}, "--files"},
      {{"audio", target, "--clips", "10", "--seed", "-1"}, "--seed"},
      {{"audio", target, "--clips", "10", "--rows-per-batch", "0"},
       "--rows-per-batch"},
      {{"audio", target, "--clips", "10", "--corrupt-every", "-1"},
       "--corrupt-every"},
      {{"audio", target, "--clips", "10", "--hf-audio-struct=yes"},
       "--hf-audio-struct"},
      {{"audio", target, "--clips", "10", "--bogus", "1"}, "--bogus"},
      {{"audio", "--clips", "10"}, "expected audio DIR"},
  };
  for (const auto& [args, named] : bad) {
    std::ostringstream out, err;
    EXPECT_EQ(RunGenCommand(args, out, err), 2) << named;
    EXPECT_EQ(out.str(), "");
    EXPECT_THAT(err.str(), HasSubstr(named));
    EXPECT_THAT(err.str(), ::testing::MatchesRegex("sluice gen: [^\n]+\n"));
  }
  EXPECT_FALSE(fs::exists(target));
  std::ostringstream out, err;
  EXPECT_EQ(RunGenCommand({"audio", "--help"}, out, err), 0);
  EXPECT_THAT(out.str(), HasSubstr("usage: sluice gen audio"));
}

}  // namespace
}  // namespace sluice::cli
