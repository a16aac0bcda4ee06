// decode_audio() and resample() of `sluice._sluice`: stages/audio/codec/
// as plain functions returning float32 numpy arrays. Refusals and bad
// arguments raise ValueError; a refused clip's message starts with the skip
// reason ("not_audio: ...").
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bindings/python/audio_functions.h"
#include "pybind11/numpy.h"
#include "pybind11/stl.h"
#include "stages/audio/codec/audio_decoding.h"
#include "stages/audio/codec/resampler.h"

namespace sluice::python {
namespace {

namespace py = pybind11;

// Any real 1-D array, converted (copied if needed) to C-contiguous float32.
using Waveform = py::array_t<float, py::array::c_style | py::array::forcecast>;

void ThrowValueErrorIfError(const absl::Status& status) {
  if (!status.ok()) throw py::value_error(std::string(status.message()));
}

audio::ResampleQuality QualityOf(const std::string& name) {
  const std::optional<audio::ResampleQuality> quality =
      audio::ResampleQualityFromName(name);
  if (!quality) {
    throw py::value_error(
        "quality must be one of \"quick\", \"low\", "
        "\"medium\", \"high\", \"very_high\", got \"" +
        name + "\"");
  }
  return *quality;
}

// A 1-D float32 array owning `samples` (no copy).
py::array_t<float> ToArray(std::vector<float> samples) {
  auto owned = std::make_unique<std::vector<float>>(std::move(samples));
  std::vector<float>& vector = *owned;
  py::capsule base(owned.get(),
                   [](void* p) { delete static_cast<std::vector<float>*>(p); });
  owned.release();  // the capsule deletes it now
  return py::array_t<float>(vector.size(), vector.data(), base);
}

py::array_t<float> DecodeAudioOf(const py::buffer& data,
                                 std::optional<int> sample_rate,
                                 const std::string& quality,
                                 double max_seconds) {
  const py::buffer_info info = data.request();  // contiguous bytes
  const std::span<const std::byte> bytes(
      static_cast<const std::byte*>(info.ptr),
      static_cast<size_t>(info.size * info.itemsize));
  const audio::ResampleQuality resample_quality = QualityOf(quality);
  audio::DecodedAudio decoded;
  std::vector<float> resampled;
  absl::Status status;
  {
    py::gil_scoped_release release;
    status =
        audio::DecodeAudioInto(bytes, {.max_seconds = max_seconds}, decoded);
    if (status.ok() && sample_rate && *sample_rate != decoded.sample_rate) {
      audio::Resampler resampler(resample_quality);
      status = resampler.Resample(decoded.samples, decoded.sample_rate,
                                  *sample_rate, resampled);
      decoded.samples = std::move(resampled);
    }
  }
  ThrowValueErrorIfError(status);
  return ToArray(std::move(decoded.samples));
}

py::array_t<float> ResampleOf(const Waveform& samples, int in_rate,
                              int out_rate, const std::string& quality) {
  if (samples.ndim() != 1) {
    throw py::value_error("resample: samples must be 1-D, got " +
                          std::to_string(samples.ndim()) + " dimensions");
  }
  const std::span<const float> in(samples.data(),
                                  static_cast<size_t>(samples.shape(0)));
  audio::Resampler resampler(QualityOf(quality));
  std::vector<float> out;
  absl::Status status;
  {
    py::gil_scoped_release release;
    status = resampler.Resample(in, in_rate, out_rate, out);
  }
  ThrowValueErrorIfError(status);
  return ToArray(std::move(out));
}

}  // namespace

void RegisterAudioCodecFunctions(pybind11::module_& module) {
  module.def("decode_audio", &DecodeAudioOf, py::arg("data"),
             py::arg("sample_rate") = py::none(), py::arg("quality") = "high",
             py::arg("max_seconds") = 0.0,
             "Encoded WAV/FLAC/Ogg/MP3 bytes to a mono float32 waveform "
             "(mean of channels, soundfile's float scaling), resampled with "
             "soxr to `sample_rate` when given (quality \"quick\", \"low\", "
             "\"medium\", \"high\", \"very_high\"). max_seconds=0: no limit. "
             "A refused clip raises ValueError starting with the reason "
             "(stages/audio/codec/audio_skip_reason.h).");
  module.def("resample", &ResampleOf, py::arg("samples"), py::arg("in_rate"),
             py::arg("out_rate"), py::arg("quality") = "high",
             "A 1-D waveform resampled from in_rate to out_rate Hz as "
             "float32, bit-identical to soxr_oneshot at that quality; "
             "round(n * out_rate / in_rate) samples "
             "(stages/audio/codec/resampler.h).");
}

}  // namespace sluice::python
