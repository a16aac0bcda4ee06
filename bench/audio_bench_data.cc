// The audio benchmark's data set (audio_bench_data.h).
#include "bench/audio_bench_data.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_format.h"
#include "bindings/cli/audio_data.h"
#include "io/arrow/ipc_bytes.h"

namespace sluice::audio_bench {
namespace {

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

}  // namespace

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

}  // namespace sluice::audio_bench
