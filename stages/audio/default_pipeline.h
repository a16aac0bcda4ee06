// The default audio pipelines (proto/examples/audio_train.textproto and
// audio_eval.textproto, compiled in) with the knobs of seed 004's loader, so
// nobody has to write the proto by hand:
//
//   SLUICE_ASSIGN_OR_RETURN(
//       DataLoaderConfig config,
//       audio::MakePipeline({.directories = {"/data/clips"},
//                            .mode = audio::PipelineMode::kEval,
//                            .n_mels = 128}));
//
// The pipeline: file_path_provider "files" -> arrow_source "clips" ->
// audio_decoder "decoder" -> crop_or_pad "crop" -> spectrogram
// "spectrogram" -> shuffle_buffer "shuffle" -> batcher "batches", whose
// batches hold spectrogram float32 (B, n_mels, frames), label int64 (B,)
// and index int64 (B,).
#ifndef SLUICE_STAGES_AUDIO_DEFAULT_PIPELINE_H_
#define SLUICE_STAGES_AUDIO_DEFAULT_PIPELINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/data_loader_config.pb.h"

namespace sluice::audio {

enum class PipelineMode {
  // Endless passes (file order reshuffled per pass), a random crop per clip
  // and pass, a reservoir of 10000 that emits from 8000.
  kTrain,
  // One pass, every good clip exactly once, the centre crop, a reservoir of
  // 1000 without minimum fill; then end of stream.
  kEval,
};

// Overrides of the default pipeline; unset fields keep the mode's file's
// values (the defaults noted below).
struct PipelineOptions {
  // Directories of Arrow IPC files (`*.arrow`, `*.feather`, `*.ipc`, found
  // recursively); required, at least one. A path that is a file is refused:
  // give its directory.
  std::vector<std::string> directories;
  PipelineMode mode = PipelineMode::kTrain;
  std::optional<uint32_t> sample_rate;  // Hz, decoder and mel scale: 16000
  // Clip length: round(clip_seconds * sample_rate) samples; 1.0.
  std::optional<double> clip_seconds;
  std::optional<uint32_t> n_fft;       // 400
  std::optional<uint32_t> hop_length;  // 160
  std::optional<uint32_t> n_mels;      // 64; 0: n_fft / 2 + 1 linear bins
  std::optional<uint32_t> batch_size;  // 256
  // Reservoir size and minimum fill (train 10000 / 8000, eval 1000 / 0). A
  // shuffle_buffer below the default min_fill lowers min_fill to it.
  std::optional<uint64_t> shuffle_buffer;
  std::optional<uint64_t> min_fill;
  std::optional<uint64_t> seed;            // 0
  std::optional<uint32_t> worker_threads;  // 0: one per core
  // The Arrow column of the encoded clips, "audio"; a member of a struct
  // column by dotted path: "audio.bytes" for Hugging Face's Audio feature.
  std::optional<std::string> audio_column;
  std::optional<std::string> label_column;  // int64 labels, "label"
  // Data-parallel training: this process is `rank` of `world_size` and
  // reads only its shard (DataLoaderConfig.rank / world_size).
  std::optional<uint32_t> rank;
  std::optional<uint32_t> world_size;
  // The same batches at any thread count (DataLoaderConfig.deterministic).
  std::optional<bool> deterministic;
};

// The text-format config the mode starts from (DATA_DIR placeholder
// directory).
std::string_view DefaultPipelineText(PipelineMode mode);

// The default pipeline with `options` applied, the batcher's spectrogram
// shape recomputed ([n_mels, 1 + samples / hop_length]). InvalidArgument
// naming the option for a bad one (no directory, a file among them, a zero
// sample rate, size or length, a clip shorter than n_fft / 2 + 1 samples,
// min_fill above shuffle_buffer, an empty column name); the factory checks
// the rest when the pipeline is built.
absl::StatusOr<DataLoaderConfig> MakePipeline(const PipelineOptions& options);

}  // namespace sluice::audio

#endif  // SLUICE_STAGES_AUDIO_DEFAULT_PIPELINE_H_
