// `sluice gen audio`: synthetic labelled audio clips (synthetic_audio.h) in
// Arrow IPC files, the test and demo data of the audio loader.
//
//   absl::StatusOr<AudioDataset> written = WriteAudioDataset(
//       {.dir = "audio", .clips = 1000, .classes = 10, .files = 4});
//
// Columns: "audio", the encoded clip (binary; with hf_audio_struct Hugging
// Face's Audio layout struct<bytes: binary, path: string>, path like
// "clip-000123.flac"), "label" int64 (the class) and "duration_seconds"
// float32 (frames / sample rate; null for a damaged clip).
#ifndef SLUICE_BINDINGS_CLI_AUDIO_DATA_H_
#define SLUICE_BINDINGS_CLI_AUDIO_DATA_H_

#include <array>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bindings/cli/synthetic_audio.h"

namespace sluice::cli {

struct AudioDatasetOptions {
  std::string dir;
  int64_t clips = 0;
  int64_t classes = 8;
  int64_t files = 1;
  int64_t rows_per_batch = 256;
  uint64_t seed = 1;
  // One clip in `corrupt_every` is damaged, at least one when there are 20
  // clips or more; 0 for none.
  int64_t corrupt_every = 100;
  bool hf_audio_struct = false;
};

// The damaged rows of a data set (row -> kind), a function of the options'
// clips, corrupt_every and seed: spread evenly over the rows, one per
// stretch of clips / count rows, kinds in CorruptKind order, cycling.
std::map<int64_t, CorruptKind> CorruptRows(const AudioDatasetOptions& options);

struct AudioDataset {
  std::vector<std::string> paths;
  int64_t clips = 0;  // rows, damaged ones included
  int64_t record_batches = 0;
  int64_t file_bytes = 0;
  int64_t audio_bytes = 0;               // encoded bytes of every clip
  double audio_seconds = 0;              // of the good clips
  std::vector<int64_t> clips_per_class;  // [label]
  std::array<int64_t, kAudioEncodings> good_per_encoding{};  // [encoding]
  std::array<int64_t, kCorruptKinds> corrupt_per_kind{};     // [kind]

  int64_t corrupt_clips() const;
};

// Writes rows 0..clips-1 into `files` files "data-0000N-of-0000F.arrow"
// (N from 1), split evenly and in order, in record batches of
// rows_per_batch rows. Row r is DrawClipSpec(seed, r, classes) synthesised
// and encoded, or damaged when CorruptRows names it, so a row does not
// depend on how the rows are split. The same options write the same bytes.
// InvalidArgument for options out of range (clips, classes, files, rows per
// batch at least 1; classes at most 1000; corrupt_every at least 0).
absl::StatusOr<AudioDataset> WriteAudioDataset(
    const AudioDatasetOptions& options);

// `sluice gen audio DIR --clips N [--classes K] [--files F] [--seed S]
// [--rows-per-batch R] [--corrupt-every C] [--hf-audio-struct]`; `args` are
// the words after "gen". Prints the paths and a summary. Returns the exit
// code: 0, 2 for a usage error (one line on `err` naming the flag), 1 when
// writing failed.
int RunGenAudioCommand(const std::vector<std::string>& args, std::ostream& out,
                       std::ostream& err);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_AUDIO_DATA_H_
