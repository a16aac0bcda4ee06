// The audio stages (stages/audio/audio_decoder.h, crop_or_pad_stage.h,
// spectrogram_stage.h) in small pipelines fed with hand-made examples.
#include <sndfile.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/data_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stages/audio/audio_decoder.h"
#include "stages/audio/crop_or_pad_stage.h"
#include "stages/audio/dsp/crop_or_pad.h"
#include "stages/audio/dsp/spectrogram.h"
#include "stages/audio/spectrogram_stage.h"
#include "tests/stages/audio/codec/test_clips.h"
#include "tests/stages/generic/example_source.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice::audio {
namespace {

using ::sluice::testing::FactoryWithExamples;
using ::sluice::testing::ParseConfig;
using ::sluice::testing::StageTotals;
using ::testing::HasSubstr;

// source -> one stage called "stage" of `stage_config` (e.g.
// "audio_decoder { }"); every example that comes out, and the stage's
// totals.
std::vector<Example> RunStage(std::vector<Example> examples,
                              const std::string& stage_config,
                              StageMetricProto* totals = nullptr) {
  DataLoader loader(FactoryWithExamples("source", std::move(examples)));
  loader.Configure(ParseConfig(absl::StrCat(
      "worker_threads: 2 stage { name: 'source' counting_source {} }"
      " stage { name: 'stage' input: 'source' ",
      stage_config, " }")));
  loader.Start();
  std::vector<Example> out;
  while (std::optional<Example> example = loader.GetNext<Example>()) {
    out.push_back(std::move(*example));
  }
  loader.Stop();
  if (totals != nullptr) *totals = StageTotals(loader, "stage");
  return out;
}

std::map<std::string, uint64_t> Skipped(const StageMetricProto& totals) {
  std::map<std::string, uint64_t> skipped;
  for (const SkipCountProto& skip : totals.skipped()) {
    skipped[skip.reason()] += skip.count();
  }
  return skipped;
}

Example WithIndex(int64_t index) {
  Example example;
  example.Set("index", ExampleField::Scalar(index));
  example.Set("seed", ExampleField::Scalar<int64_t>(1000 + index));
  example.Set("label", ExampleField::Scalar<int64_t>(index % 3));
  return example;
}

Example Clip(int64_t index, const std::vector<std::byte>& bytes) {
  Example example = WithIndex(index);
  example.Set("audio",
              ExampleField::OwnedBytes(
                  DType::kUInt8, {static_cast<int64_t>(bytes.size())}, bytes));
  return example;
}

Example Waveform(int64_t index, std::vector<float> samples) {
  Example example = WithIndex(index);
  const int64_t n = static_cast<int64_t>(samples.size());
  example.Set("waveform", ExampleField::Owned<float>({n}, std::move(samples)));
  return example;
}

std::vector<float> Floats(const Example& example, const std::string& name) {
  const ExampleField* field = example.Find(name);
  EXPECT_NE(field, nullptr) << name;
  if (field == nullptr) return {};
  EXPECT_EQ(field->dtype(), DType::kFloat32);
  return {field->data<float>(), field->data<float>() + field->elements()};
}

int64_t Index(const Example& example) {
  return example.Find("index")->scalar<int64_t>();
}

// Examples by their index.
std::map<int64_t, const Example*> ByIndex(const std::vector<Example>& out) {
  std::map<int64_t, const Example*> by_index;
  for (const Example& example : out) by_index[Index(example)] = &example;
  return by_index;
}

TEST(AudioDecoderStageTest, DecodesResamplesAndCountsBadClipsByReason) {
  using testing::EncodeClip;
  using testing::Sine;
  const std::vector<float> tone = Sine(16000, 16000, 440, 0.5);
  std::vector<float> stereo;
  for (float s : Sine(8000, 8000, 300, 0.5)) {
    stereo.push_back(s);
    stereo.push_back(s);
  }
  std::vector<Example> in = {
      Clip(0, EncodeClip(tone, 1, 16000, SF_FORMAT_WAV | SF_FORMAT_FLOAT)),
      Clip(1, EncodeClip(stereo, 2, 8000, SF_FORMAT_FLAC | SF_FORMAT_PCM_16)),
      Clip(2, {std::byte{1}, std::byte{2}, std::byte{3}}),
      WithIndex(3),  // no audio field
      Clip(4, {}),
  };
  StageMetricProto totals;
  const std::vector<Example> out =
      RunStage(std::move(in), "audio_decoder { sample_rate: 16000 }", &totals);
  ASSERT_EQ(out.size(), 2u);
  const auto by_index = ByIndex(out);
  // The float WAV at the target rate comes out as written.
  EXPECT_EQ(Floats(*by_index.at(0), "waveform"), tone);
  // 1 s at 8 kHz, resampled: 16000 samples.
  EXPECT_EQ(Floats(*by_index.at(1), "waveform").size(), 16000u);
  for (const auto& [index, example] : by_index) {
    EXPECT_EQ(example->Find("audio"), nullptr);  // the clip bytes are gone
    EXPECT_EQ(example->Find("label")->scalar<int64_t>(), index % 3);
  }
  EXPECT_EQ(Skipped(totals),
            (std::map<std::string, uint64_t>{
                {"not_audio", 1}, {"missing_field", 1}, {"empty_clip", 1}}));
  EXPECT_EQ(totals.audio_decoder().clips_decoded(), 2u);
  EXPECT_EQ(totals.audio_decoder().clips_resampled(), 1u);
  EXPECT_DOUBLE_EQ(totals.audio_decoder().audio_seconds(), 2.0);
}

TEST(AudioDecoderStageTest, ConfigErrorsNameTheField) {
  for (const auto& [config, field] :
       std::vector<std::pair<std::string, std::string>>{
           {"sample_rate: 0", "sample_rate"},
           {"resample_quality: 'best'", "resample_quality"},
           {"parallelism: 0", "parallelism"},
           {"max_channels: 0", "max_channels"},
           {"max_seconds: -1", "max_seconds"},
           {"input_field: ''", "input_field"}}) {
    DataLoader loader(FactoryWithExamples("source", {}));
    try {
      loader.Configure(
          ParseConfig("stage { name: 'source' counting_source {} }"
                      " stage { name: 'dec' input: 'source' audio_decoder { " +
                      config + " } }"));
      ADD_FAILURE() << config << " was accepted";
    } catch (const std::exception& error) {
      EXPECT_THAT(error.what(), HasSubstr("'dec'")) << config;
      EXPECT_THAT(error.what(), HasSubstr(field)) << config;
    }
  }
}

TEST(CropOrPadStageTest, TrainFollowsSeedAndIndexEvalTakesTheCentre) {
  std::vector<float> ramp(1000);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i);
  for (const char* mode : {"TRAIN", "EVAL"}) {
    std::vector<Example> in;
    for (int64_t i = 0; i < 20; ++i) in.push_back(Waveform(i, ramp));
    in.push_back(Waveform(20, {1, 2, 3}));                     // short: padded
    in.push_back(Waveform(21, std::vector<float>(100, 7.f)));  // unchanged
    StageMetricProto totals;
    const std::vector<Example> out = RunStage(
        std::move(in),
        absl::StrCat("crop_or_pad { samples: 100 mode: ", mode, " }"), &totals);
    ASSERT_EQ(out.size(), 22u);
    const CropMode crop_mode =
        std::string(mode) == "TRAIN" ? CropMode::kTrain : CropMode::kEval;
    std::set<int64_t> starts;
    for (const auto& [index, example] : ByIndex(out)) {
      const std::vector<float> clip = Floats(*example, "waveform");
      ASSERT_EQ(clip.size(), 100u);
      if (index < 20) {
        const int64_t start =
            CropStart(1000, 100, 1000 + index, index, crop_mode);
        EXPECT_EQ(clip[0], static_cast<float>(start)) << mode << index;
        EXPECT_EQ(clip[99], static_cast<float>(start + 99));
        starts.insert(start);
      } else if (index == 20) {
        const size_t left = crop_mode == CropMode::kTrain ? 0 : 48;
        EXPECT_EQ(clip[left], 1.f) << mode;
        EXPECT_EQ(clip[left + 2], 3.f) << mode;
      } else {
        EXPECT_EQ(clip, std::vector<float>(100, 7.f));
      }
    }
    // Training draws many windows; evaluation always the centre one.
    EXPECT_EQ(starts.size() > 10, crop_mode == CropMode::kTrain) << mode;
    EXPECT_EQ(totals.crop_or_pad().cropped(), 20u);
    EXPECT_EQ(totals.crop_or_pad().padded(), 1u);
    EXPECT_EQ(totals.crop_or_pad().unchanged(), 1u);
  }
}

TEST(CropOrPadStageTest, TrainNeedsSeedAndIndex) {
  Example no_seed = Waveform(0, std::vector<float>(10, 1.f));
  no_seed.Remove("seed");
  Example bytes = WithIndex(1);
  bytes.Set("waveform", ExampleField::Scalar<int64_t>(3));
  StageMetricProto totals;
  EXPECT_TRUE(RunStage({no_seed, bytes}, "crop_or_pad { samples: 4 }", &totals)
                  .empty());
  EXPECT_EQ(Skipped(totals), (std::map<std::string, uint64_t>{
                                 {"missing_field", 1}, {"wrong_dtype", 1}}));
  // Evaluation needs neither.
  EXPECT_EQ(RunStage({no_seed}, "crop_or_pad { samples: 4 mode: EVAL }").size(),
            1u);
}

TEST(SpectrogramStageTest, EqualsTheTransformAndNamesItsShape) {
  const std::vector<float> tone = testing::Sine(16000, 16000, 1000, 0.5);
  StageMetricProto totals;
  const std::vector<Example> out =
      RunStage({Waveform(0, tone), Waveform(1, {0.f, 1.f})},
               "spectrogram { n_fft: 400 hop_length: 160 n_mels: 64 log: LOG }",
               &totals);
  ASSERT_EQ(out.size(), 1u);
  const ExampleField* field = out[0].Find("spectrogram");
  ASSERT_NE(field, nullptr);
  EXPECT_EQ(field->shape(), (std::vector<int64_t>{64, 101}));
  EXPECT_EQ(out[0].Find("waveform"), nullptr);
  absl::StatusOr<Spectrogram> reference =
      Spectrogram::Create({.n_fft = 400,
                           .hop_length = 160,
                           .mel = MelConfig{.n_mels = 64},
                           .log = LogScale::kNaturalLog});
  ASSERT_TRUE(reference.ok());
  std::vector<float> expected(reference->OutputSize(tone.size()));
  ASSERT_TRUE(reference->Compute(tone, expected).ok());
  EXPECT_EQ(Floats(out[0], "spectrogram"), expected);
  EXPECT_EQ(Skipped(totals),
            (std::map<std::string, uint64_t>{{"too_short", 1}}));
  EXPECT_EQ(totals.spectrogram().spectrograms(), 1u);
}

TEST(SpectrogramStageTest, ConfigErrorsNameTheField) {
  for (const auto& [config, field] :
       std::vector<std::pair<std::string, std::string>>{
           {"n_fft: 1", "n_fft"},
           {"n_fft: 400 win_length: 500", "win_length"},
           {"power: 3", "power"},
           {"n_mels: 64 mel_scale: 'bark'", "mel_scale"},
           {"n_mels: 64 mel_norm: 'l2'", "mel_norm"},
           {"n_mels: 64 f_max: 9000", "f_max"},
           {"parallelism: 0", "parallelism"}}) {
    DataLoader loader(FactoryWithExamples("source", {}));
    try {
      loader.Configure(
          ParseConfig("stage { name: 'source' counting_source {} }"
                      " stage { name: 'spec' input: 'source' spectrogram { " +
                      config + " } }"));
      ADD_FAILURE() << config << " was accepted";
    } catch (const std::exception& error) {
      EXPECT_THAT(error.what(), HasSubstr("'spec'")) << config;
      EXPECT_THAT(error.what(), HasSubstr(field)) << config;
    }
  }
}

}  // namespace
}  // namespace sluice::audio
