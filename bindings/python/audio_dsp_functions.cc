#include <cstdint>
#include <optional>
#include <string>

#include "bindings/python/audio_functions.h"
#include "engine/data_loader.h"
#include "engine/errors.h"
#include "pybind11/numpy.h"
#include "pybind11/stl.h"
#include "stages/audio/dsp/crop_or_pad.h"
#include "stages/audio/dsp/spectrogram.h"

namespace sluice::python {
namespace {

namespace py = pybind11;
using audio::CropMode;

// Any real 1-D array, converted (copied if needed) to C-contiguous float32.
using Waveform = py::array_t<float, py::array::c_style | py::array::forcecast>;

std::span<const float> WaveformSpan(const Waveform& waveform,
                                    const char* function) {
  if (waveform.ndim() != 1) {
    throw ConfigError(std::string(function) + ": waveform must be 1-D, got " +
                      std::to_string(waveform.ndim()) + " dimensions");
  }
  return {waveform.data(), static_cast<size_t>(waveform.shape(0))};
}

// One of `names` (index into them), or a ConfigError naming the field.
int Choice(const std::string& field, const std::string& value,
           std::initializer_list<const char*> names) {
  int index = 0;
  std::string allowed;
  for (const char* name : names) {
    if (value == name) return index;
    allowed += std::string(index > 0 ? ", " : "") + "\"" + name + "\"";
    ++index;
  }
  throw ConfigError("spectrogram: " + field + " must be one of " + allowed +
                    ", got \"" + value + "\"");
}

py::array_t<float> SpectrogramOf(
    const Waveform& waveform, int sample_rate, int n_fft,
    std::optional<int> win_length, std::optional<int> hop_length, double power,
    bool center, int n_mels, double f_min, std::optional<double> f_max,
    const std::string& mel_scale, const std::optional<std::string>& norm,
    const std::optional<std::string>& log, double log_floor,
    std::optional<double> top_db) {
  const std::span<const float> samples = WaveformSpan(waveform, "spectrogram");
  audio::SpectrogramConfig config{.sample_rate = sample_rate,
                                  .n_fft = n_fft,
                                  .win_length = win_length,
                                  .hop_length = hop_length,
                                  .power = power,
                                  .center = center,
                                  .log_floor = log_floor,
                                  .top_db = top_db};
  if (n_mels != 0) {
    config.mel = audio::MelConfig{
        .n_mels = n_mels,
        .f_min = f_min,
        .f_max = f_max,
        .mel_scale = Choice("mel_scale", mel_scale, {"htk", "slaney"}) == 0
                         ? audio::MelScale::kHtk
                         : audio::MelScale::kSlaney,
        .norm = norm && Choice("norm", *norm, {"slaney"}) == 0
                    ? audio::MelNorm::kSlaney
                    : audio::MelNorm::kNone};
  }
  if (log) {
    config.log = Choice("log", *log, {"log", "db"}) == 0
                     ? audio::LogScale::kNaturalLog
                     : audio::LogScale::kDecibels;
  }
  absl::StatusOr<audio::Spectrogram> spectrogram =
      audio::Spectrogram::Create(config);
  ThrowIfError(spectrogram.status());
  const size_t frames = spectrogram->NumFrames(samples.size());
  if (frames == 0) ThrowIfError(spectrogram->Compute(samples, {}));
  py::array_t<float> out({static_cast<size_t>(spectrogram->rows()), frames});
  const std::span<float> out_span(out.mutable_data(),
                                  static_cast<size_t>(out.size()));
  absl::Status status;
  {
    py::gil_scoped_release release;
    status = spectrogram->Compute(samples, out_span);
  }
  ThrowIfError(status);
  return out;
}

CropMode Mode(bool train) { return train ? CropMode::kTrain : CropMode::kEval; }

py::array_t<float> CropOrPadOf(const Waveform& waveform, size_t clip_length,
                               uint64_t seed, int64_t index, bool train) {
  const std::span<const float> samples = WaveformSpan(waveform, "crop_or_pad");
  py::array_t<float> clip(clip_length);
  audio::CropOrPad(samples, seed, index, Mode(train),
                   {clip.mutable_data(), clip_length});
  return clip;
}

}  // namespace

void RegisterAudioDspFunctions(pybind11::module_& module) {
  module.def("spectrogram", &SpectrogramOf, py::arg("waveform"),
             py::arg("sample_rate") = 16000, py::arg("n_fft") = 400,
             py::arg("win_length") = py::none(),
             py::arg("hop_length") = py::none(), py::arg("power") = 2.0,
             py::arg("center") = true, py::arg("n_mels") = 0,
             py::arg("f_min") = 0.0, py::arg("f_max") = py::none(),
             py::arg("mel_scale") = "htk", py::arg("norm") = py::none(),
             py::arg("log") = py::none(), py::arg("log_floor") = 1e-6,
             py::arg("top_db") = py::none(),
             "The (mel) spectrogram of a 1-D waveform as float32 (rows, "
             "frames), like torchaudio.transforms.Spectrogram (n_mels=0) or "
             "MelSpectrogram, then log=None | \"log\" (natural log of "
             "max(x, log_floor)) | \"db\" (AmplitudeToDB, optional top_db). "
             "stages/audio/dsp/spectrogram.h. ValueError naming the field on "
             "a bad parameter.");
  module.def(
      "crop_start",
      [](size_t length, size_t clip_length, uint64_t seed, int64_t index,
         bool train) {
        return audio::CropStart(length, clip_length, seed, index, Mode(train));
      },
      py::arg("length"), py::arg("clip_length"), py::arg("seed"),
      py::arg("index"), py::arg("train"),
      "Where a clip starts in a waveform of `length` samples "
      "(stages/audio/dsp/crop_or_pad.h): clip[i] = waveform[start + i], zero "
      "outside; negative = left padding (eval of a short waveform).");
  module.def("crop_or_pad", &CropOrPadOf, py::arg("waveform"),
             py::arg("clip_length"), py::arg("seed"), py::arg("index"),
             py::arg("train"),
             "A float32 clip of `clip_length` samples: random crop / pad at "
             "the end (train), centre crop / centre pad (eval).");
}

}  // namespace sluice::python
