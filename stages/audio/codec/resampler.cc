#include "stages/audio/codec/resampler.h"

#include <soxr.h>

#include <climits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice::audio {
namespace {

constexpr std::pair<ResampleQuality, std::string_view> kQualityNames[] = {
    {ResampleQuality::kQuick, "quick"},        {ResampleQuality::kLow, "low"},
    {ResampleQuality::kMedium, "medium"},      {ResampleQuality::kHigh, "high"},
    {ResampleQuality::kVeryHigh, "very_high"},
};

unsigned long SoxrRecipe(ResampleQuality quality) {
  switch (quality) {
    case ResampleQuality::kQuick:
      return SOXR_QQ;
    case ResampleQuality::kLow:
      return SOXR_LQ;
    case ResampleQuality::kMedium:
      return SOXR_MQ;
    case ResampleQuality::kHigh:
      return SOXR_HQ;
    case ResampleQuality::kVeryHigh:
      return SOXR_VHQ;
  }
  return SOXR_HQ;
}

}  // namespace

std::optional<ResampleQuality> ResampleQualityFromName(std::string_view name) {
  for (const auto& [quality, quality_name] : kQualityNames) {
    if (name == quality_name) return quality;
  }
  return std::nullopt;
}

std::string_view ResampleQualityName(ResampleQuality quality) {
  for (const auto& [known, name] : kQualityNames) {
    if (known == quality) return name;
  }
  return "unknown";
}

size_t ResampledFrames(size_t in_frames, int in_rate, int out_rate) {
  // soxr's flush length, computed the same way (cr.c, resampler_flush).
  const double io_ratio =
      static_cast<double>(in_rate) / static_cast<double>(out_rate);
  return static_cast<size_t>(static_cast<double>(in_frames) / io_ratio + .5);
}

Resampler::Resampler(ResampleQuality quality) : quality_(quality) {}

Resampler::~Resampler() {
  if (soxr_ != nullptr) soxr_delete(soxr_);
}

Resampler::Resampler(Resampler&& other) noexcept
    : quality_(other.quality_),
      soxr_(std::exchange(other.soxr_, nullptr)),
      used_(other.used_),
      in_rate_(other.in_rate_),
      out_rate_(other.out_rate_) {}

Resampler& Resampler::operator=(Resampler&& other) noexcept {
  if (this != &other) {
    if (soxr_ != nullptr) soxr_delete(soxr_);
    quality_ = other.quality_;
    soxr_ = std::exchange(other.soxr_, nullptr);
    used_ = other.used_;
    in_rate_ = other.in_rate_;
    out_rate_ = other.out_rate_;
  }
  return *this;
}

absl::Status Resampler::PrepareFor(int in_rate, int out_rate) {
  if (soxr_ != nullptr && in_rate == in_rate_ && out_rate == out_rate_) {
    if (used_) {
      if (soxr_error_t error = soxr_clear(soxr_)) {
        soxr_delete(soxr_);
        soxr_ = nullptr;
        return absl::InternalError(absl::StrCat("soxr_clear: ", error));
      }
      used_ = false;
    }
    return absl::OkStatus();
  }
  if (soxr_ != nullptr) soxr_delete(soxr_);
  const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
  const soxr_quality_spec_t quality =
      soxr_quality_spec(SoxrRecipe(quality_), 0);
  const soxr_runtime_spec_t runtime = soxr_runtime_spec(1);
  soxr_error_t error = nullptr;
  soxr_ = soxr_create(in_rate, out_rate, 1, &error, &io, &quality, &runtime);
  if (error != nullptr || soxr_ == nullptr) {
    soxr_ = nullptr;
    return absl::InternalError(absl::StrCat("soxr_create: ", error));
  }
  in_rate_ = in_rate;
  out_rate_ = out_rate;
  used_ = false;
  return absl::OkStatus();
}

absl::Status Resampler::Resample(std::span<const float> in, int in_rate,
                                 int out_rate, std::vector<float>& out) {
  out.clear();
  if (in_rate <= 0 || out_rate <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sample rates must be positive, got ", in_rate, " -> ", out_rate));
  }
  if (in.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError(
        absl::StrCat(in.size(), " frames is more than soxr can count"));
  }
  if (in_rate == out_rate) {
    out.assign(in.begin(), in.end());
    return absl::OkStatus();
  }
  const size_t expected = ResampledFrames(in.size(), in_rate, out_rate);
  if (expected == 0) return absl::OkStatus();
  if (absl::Status status = PrepareFor(in_rate, out_rate); !status.ok()) {
    return status;
  }
  // One frame of room past the expected count: soxr flushes only when the
  // output room covers all of the input (ceil(olen * in/out) >= in.size()).
  out.resize(expected + 1);
  size_t consumed = 0;
  size_t produced = 0;
  used_ = true;
  // ~size marks the input as the whole signal, as soxr_oneshot does.
  const soxr_error_t error =
      soxr_process(soxr_, in.data(), ~in.size(), &consumed, out.data(),
                   out.size(), &produced);
  if (error != nullptr || produced != expected) {
    out.clear();
    soxr_delete(soxr_);
    soxr_ = nullptr;
    return absl::InternalError(
        absl::StrCat("soxr_process ", in_rate, " -> ", out_rate, " Hz on ",
                     in.size(), " frames: ", error != nullptr ? error : "",
                     " produced ", produced, " frames, expected ", expected));
  }
  out.resize(produced);
  return absl::OkStatus();
}

}  // namespace sluice::audio
