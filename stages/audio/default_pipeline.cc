#include "stages/audio/default_pipeline.h"

#include <cmath>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "stages/audio/default_pipeline_text.h"

namespace sluice::audio {
namespace {

absl::Status OptionError(const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat("audio pipeline: ", message));
}

// The stage of `config` holding the `has` config; the built-in configs have
// exactly one of each.
template <typename Has>
StageConfig* FindStage(DataLoaderConfig& config, Has has) {
  for (StageConfig& stage : *config.mutable_stage()) {
    if ((stage.*has)()) return &stage;
  }
  return nullptr;
}

// Frames of a `samples`-long waveform as torch.stft counts them; 0 when it
// is too short (center: the reflect padding needs more than n_fft / 2).
uint64_t NumFrames(uint64_t samples, uint64_t n_fft, uint64_t hop,
                   bool center) {
  if (center) {
    if (samples <= n_fft / 2) return 0;
    return 1 + (samples + 2 * (n_fft / 2) - n_fft) / hop;
  }
  return samples < n_fft ? 0 : 1 + (samples - n_fft) / hop;
}

// Points the arrow_source's columns at the user's: the clip becomes field
// "audio", the label field "label", whatever the columns are called.
absl::Status SetColumns(const PipelineOptions& options,
                        ArrowSourceConfig& source) {
  for (ArrowSourceConfig::Column& column : *source.mutable_column()) {
    const std::string field =
        column.has_field() ? column.field() : column.name();
    if (field != "audio" && field != "label") continue;
    const std::optional<std::string>& name =
        field == "audio" ? options.audio_column : options.label_column;
    const char* option = field == "audio" ? "audio_column" : "label_column";
    if (!name) continue;
    if (name->empty()) return OptionError(absl::StrCat(option, " is empty"));
    column.set_name(*name);
    column.set_field(field);
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view DefaultPipelineText(PipelineMode mode) {
  return mode == PipelineMode::kTrain ? kAudioTrainText : kAudioEvalText;
}

absl::StatusOr<DataLoaderConfig> MakePipeline(const PipelineOptions& options) {
  if (options.directories.empty()) {
    return OptionError("at least one data directory is required (paths)");
  }
  for (const std::string& directory : options.directories) {
    std::error_code error;
    if (std::filesystem::is_regular_file(directory, error)) {
      return OptionError(
          absl::StrCat("paths must be directories of Arrow files; '", directory,
                       "' is a file (give its directory)"));
    }
  }
  const auto zero = [](const auto& value) { return value && *value == 0; };
  if (zero(options.sample_rate)) {
    return OptionError("sample_rate must be at least 1");
  }
  if (zero(options.n_fft)) return OptionError("n_fft must be at least 1");
  if (zero(options.hop_length)) {
    return OptionError("hop_length must be at least 1");
  }
  if (zero(options.batch_size)) {
    return OptionError("batch_size must be at least 1");
  }
  if (zero(options.shuffle_buffer)) {
    return OptionError("shuffle_buffer must be at least 1");
  }
  if (options.clip_seconds &&
      !(std::isfinite(*options.clip_seconds) && *options.clip_seconds > 0)) {
    return OptionError(absl::StrCat("clip_seconds must be positive, not ",
                                    *options.clip_seconds));
  }

  DataLoaderConfig config;
  const std::string text(DefaultPipelineText(options.mode));
  if (!google::protobuf::TextFormat::ParseFromString(text, &config)) {
    return absl::InternalError("audio pipeline: the built-in config is broken");
  }
  StageConfig* files = FindStage(config, &StageConfig::has_file_path_provider);
  StageConfig* source = FindStage(config, &StageConfig::has_arrow_source);
  StageConfig* decoder = FindStage(config, &StageConfig::has_audio_decoder);
  StageConfig* crop = FindStage(config, &StageConfig::has_crop_or_pad);
  StageConfig* spectrogram = FindStage(config, &StageConfig::has_spectrogram);
  StageConfig* shuffle = FindStage(config, &StageConfig::has_shuffle_buffer);
  StageConfig* batcher = FindStage(config, &StageConfig::has_batcher);
  for (const StageConfig* stage :
       {files, source, decoder, crop, spectrogram, shuffle, batcher}) {
    if (stage == nullptr) {
      return absl::InternalError(
          "audio pipeline: the built-in config lacks a stage");
    }
  }

  if (options.seed) config.set_seed(*options.seed);
  if (options.rank) config.set_rank(*options.rank);
  if (options.world_size) config.set_world_size(*options.world_size);
  if (options.deterministic) config.set_deterministic(*options.deterministic);
  if (options.worker_threads) {
    config.set_worker_threads(*options.worker_threads);
  }
  files->mutable_file_path_provider()->clear_directory();
  for (const std::string& directory : options.directories) {
    files->mutable_file_path_provider()->add_directory(directory);
  }
  if (absl::Status status =
          SetColumns(options, *source->mutable_arrow_source());
      !status.ok()) {
    return status;
  }

  // Clip length: the file's crop is clip_seconds at its sample rate.
  AudioDecoderConfig& decode = *decoder->mutable_audio_decoder();
  CropOrPadConfig& cut = *crop->mutable_crop_or_pad();
  const double clip_seconds = options.clip_seconds.value_or(
      static_cast<double>(cut.samples()) / decode.sample_rate());
  const uint32_t sample_rate =
      options.sample_rate.value_or(decode.sample_rate());
  const double samples = std::round(clip_seconds * sample_rate);
  if (samples < 1 || samples > 1e10) {
    return OptionError(absl::StrCat("clip_seconds ", clip_seconds, " at ",
                                    sample_rate, " Hz is ", samples,
                                    " samples; it must be 1 to 1e10"));
  }
  decode.set_sample_rate(sample_rate);
  cut.set_samples(static_cast<uint64_t>(samples));

  sluice::SpectrogramConfig& spec = *spectrogram->mutable_spectrogram();
  spec.set_sample_rate(sample_rate);
  if (options.n_fft) spec.set_n_fft(*options.n_fft);
  if (options.hop_length) spec.set_hop_length(*options.hop_length);
  if (options.n_mels) spec.set_n_mels(*options.n_mels);
  const uint64_t n_fft = spec.n_fft();
  const uint64_t win_length = spec.win_length() > 0 ? spec.win_length() : n_fft;
  const uint64_t hop =
      spec.hop_length() > 0 ? spec.hop_length() : win_length / 2;
  const uint64_t frames =
      hop == 0 ? 0 : NumFrames(cut.samples(), n_fft, hop, spec.center());
  if (frames == 0) {
    return OptionError(absl::StrCat(
        "a clip of ", cut.samples(), " samples (clip_seconds ", clip_seconds,
        " at ", sample_rate, " Hz) is too short for n_fft ", n_fft,
        "; it needs more than n_fft / 2 samples"));
  }
  const uint64_t rows = spec.n_mels() > 0 ? spec.n_mels() : n_fft / 2 + 1;

  ShuffleBufferConfig& reservoir = *shuffle->mutable_shuffle_buffer();
  if (options.shuffle_buffer) {
    reservoir.set_size(*options.shuffle_buffer);
    if (!options.min_fill && reservoir.min_fill() > *options.shuffle_buffer) {
      reservoir.set_min_fill(*options.shuffle_buffer);
    }
  }
  if (options.min_fill) {
    if (*options.min_fill > reservoir.size()) {
      return OptionError(absl::StrCat("min_fill ", *options.min_fill,
                                      " is above shuffle_buffer ",
                                      reservoir.size()));
    }
    reservoir.set_min_fill(*options.min_fill);
  }

  BatcherConfig& batches = *batcher->mutable_batcher();
  if (options.batch_size) batches.set_batch_size(*options.batch_size);
  for (BatcherConfig::Field& field : *batches.mutable_field()) {
    if (field.name() != spec.output_field()) continue;
    field.clear_shape();
    field.add_shape(static_cast<int64_t>(rows));
    field.add_shape(static_cast<int64_t>(frames));
  }
  return config;
}

}  // namespace sluice::audio
