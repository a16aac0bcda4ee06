#include "stages/audio/default_pipeline.h"

#include <filesystem>
#include <string>
#include <vector>

#include "engine/data_loader.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "stages/stage_factory.h"
#include "tests/testing/pipeline_test_util.h"

namespace sluice::audio {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const StageConfig& Stage(const DataLoaderConfig& config,
                         const std::string& name) {
  for (const StageConfig& stage : config.stage()) {
    if (stage.name() == name) return stage;
  }
  ADD_FAILURE() << "no stage " << name;
  return StageConfig::default_instance();
}

std::vector<int64_t> SpectrogramShape(const DataLoaderConfig& config) {
  for (const BatcherConfig::Field& field :
       Stage(config, "batches").batcher().field()) {
    if (field.name() == "spectrogram") {
      return {field.shape().begin(), field.shape().end()};
    }
  }
  return {};
}

std::string ErrorOf(const PipelineOptions& options) {
  absl::StatusOr<DataLoaderConfig> config = MakePipeline(options);
  EXPECT_TRUE(absl::IsInvalidArgument(config.status())) << config.status();
  return std::string(config.status().message());
}

TEST(AudioDefaultPipelineTest, DefaultsAreTheExampleFilesWithTheDirectory) {
  for (PipelineMode mode : {PipelineMode::kTrain, PipelineMode::kEval}) {
    absl::StatusOr<DataLoaderConfig> config =
        MakePipeline({.directories = {"/data/a", "/data/b"}, .mode = mode});
    ASSERT_TRUE(config.ok()) << config.status();
    DataLoaderConfig expected;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
        std::string(DefaultPipelineText(mode)), &expected));
    // The only difference: the directories.
    auto* files = expected.mutable_stage(0)->mutable_file_path_provider();
    files->clear_directory();
    files->add_directory("/data/a");
    files->add_directory("/data/b");
    EXPECT_EQ(config->DebugString(), expected.DebugString());
    EXPECT_THAT(SpectrogramShape(*config), ElementsAre(64, 101));
  }
}

TEST(AudioDefaultPipelineTest, ModesDifferAsSeed004Says) {
  auto train = MakePipeline({.directories = {"/d"}});
  auto eval =
      MakePipeline({.directories = {"/d"}, .mode = PipelineMode::kEval});
  ASSERT_TRUE(train.ok() && eval.ok());
  EXPECT_EQ(Stage(*train, "clips").arrow_source().mode(),
            ArrowSourceConfig::TRAIN);
  EXPECT_EQ(Stage(*eval, "clips").arrow_source().mode(),
            ArrowSourceConfig::EVAL);
  EXPECT_EQ(Stage(*train, "crop").crop_or_pad().mode(), CropOrPadConfig::TRAIN);
  EXPECT_EQ(Stage(*eval, "crop").crop_or_pad().mode(), CropOrPadConfig::EVAL);
  EXPECT_EQ(Stage(*train, "shuffle").shuffle_buffer().size(), 10000u);
  EXPECT_EQ(Stage(*train, "shuffle").shuffle_buffer().min_fill(), 8000u);
  EXPECT_EQ(Stage(*eval, "shuffle").shuffle_buffer().size(), 1000u);
  EXPECT_EQ(Stage(*eval, "shuffle").shuffle_buffer().min_fill(), 0u);
}

TEST(AudioDefaultPipelineTest, OptionsReachTheirStages) {
  absl::StatusOr<DataLoaderConfig> config =
      MakePipeline({.directories = {"/d"},
                    .mode = PipelineMode::kEval,
                    .sample_rate = 8000,
                    .clip_seconds = 2.5,
                    .n_fft = 512,
                    .hop_length = 128,
                    .n_mels = 40,
                    .batch_size = 32,
                    .shuffle_buffer = 64,
                    .min_fill = 16,
                    .seed = 7,
                    .worker_threads = 3,
                    .audio_column = "audio.bytes",
                    .label_column = "class"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->seed(), 7u);
  EXPECT_EQ(config->worker_threads(), 3u);
  const ArrowSourceConfig& source = Stage(*config, "clips").arrow_source();
  ASSERT_EQ(source.column_size(), 2);
  EXPECT_EQ(source.column(0).name(), "audio.bytes");
  EXPECT_EQ(source.column(0).field(), "audio");
  EXPECT_EQ(source.column(1).name(), "class");
  EXPECT_EQ(source.column(1).field(), "label");
  EXPECT_EQ(Stage(*config, "decoder").audio_decoder().sample_rate(), 8000u);
  EXPECT_EQ(Stage(*config, "crop").crop_or_pad().samples(), 20000u);
  const sluice::SpectrogramConfig& spec =
      Stage(*config, "spectrogram").spectrogram();
  EXPECT_EQ(spec.sample_rate(), 8000u);
  EXPECT_EQ(spec.n_fft(), 512u);
  EXPECT_EQ(spec.hop_length(), 128u);
  EXPECT_EQ(spec.n_mels(), 40u);
  EXPECT_EQ(Stage(*config, "shuffle").shuffle_buffer().size(), 64u);
  EXPECT_EQ(Stage(*config, "shuffle").shuffle_buffer().min_fill(), 16u);
  EXPECT_EQ(Stage(*config, "batches").batcher().batch_size(), 32u);
  // 1 + 20000 / 128 frames.
  EXPECT_THAT(SpectrogramShape(*config), ElementsAre(40, 157));
}

TEST(AudioDefaultPipelineTest, ClipLengthFollowsTheSampleRate) {
  // 1 s (the file's clip) at 22050 Hz; 0.5 s rounds to the nearest sample.
  auto one = MakePipeline({.directories = {"/d"}, .sample_rate = 22050});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(Stage(*one, "crop").crop_or_pad().samples(), 22050u);
  EXPECT_THAT(SpectrogramShape(*one), ElementsAre(64, 1 + 22050 / 160));
  auto half = MakePipeline(
      {.directories = {"/d"}, .sample_rate = 11025, .clip_seconds = 0.5});
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(Stage(*half, "crop").crop_or_pad().samples(), 5513u);
}

TEST(AudioDefaultPipelineTest, LinearSpectrogramWithoutMels) {
  auto config = MakePipeline({.directories = {"/d"}, .n_mels = 0});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(SpectrogramShape(*config), ElementsAre(201, 101));
}

TEST(AudioDefaultPipelineTest, SmallReservoirLowersTheDefaultMinFill) {
  auto config = MakePipeline({.directories = {"/d"}, .shuffle_buffer = 100});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(Stage(*config, "shuffle").shuffle_buffer().min_fill(), 100u);
}

TEST(AudioDefaultPipelineTest, BadOptionsAreNamed) {
  EXPECT_THAT(ErrorOf({}), HasSubstr("directory"));
  EXPECT_THAT(ErrorOf({.directories = {"/d"}, .sample_rate = 0}),
              HasSubstr("sample_rate"));
  EXPECT_THAT(ErrorOf({.directories = {"/d"}, .clip_seconds = 0}),
              HasSubstr("clip_seconds"));
  EXPECT_THAT(ErrorOf({.directories = {"/d"}, .clip_seconds = -1}),
              HasSubstr("clip_seconds"));
  EXPECT_THAT(ErrorOf({.directories = {"/d"}, .n_fft = 0}), HasSubstr("n_fft"));
  EXPECT_THAT(ErrorOf({.directories = {"/d"}, .hop_length = 0}),
              HasSubstr("hop_length"));
  EXPECT_THAT(ErrorOf({.directories = {"/d"}, .batch_size = 0}),
              HasSubstr("batch_size"));
  EXPECT_THAT(ErrorOf({.directories = {"/d"}, .shuffle_buffer = 0}),
              HasSubstr("shuffle_buffer"));
  EXPECT_THAT(
      ErrorOf({.directories = {"/d"}, .shuffle_buffer = 10, .min_fill = 11}),
      HasSubstr("min_fill 11 is above shuffle_buffer 10"));
  EXPECT_THAT(ErrorOf({.directories = {"/d"}, .audio_column = ""}),
              HasSubstr("audio_column"));
  EXPECT_THAT(ErrorOf({.directories = {"/d"}, .label_column = ""}),
              HasSubstr("label_column"));
  // 1 ms at 16 kHz: 16 samples, too few for the reflect padding of 200.
  EXPECT_THAT(ErrorOf({.directories = {"/d"}, .clip_seconds = 0.001}),
              HasSubstr("too short for n_fft 400"));
}

TEST(AudioDefaultPipelineTest, AFileAmongThePathsIsRefused) {
  testing::TempDir dir;
  testing::WriteFile(dir / "data.arrow", "x");
  EXPECT_THAT(ErrorOf({.directories = {dir / "data.arrow"}}),
              HasSubstr("is a file (give its directory)"));
}

TEST(AudioDefaultPipelineTest, BothModesBuild) {
  testing::TempDir dir;
  for (PipelineMode mode : {PipelineMode::kTrain, PipelineMode::kEval}) {
    absl::StatusOr<DataLoaderConfig> config = MakePipeline(
        {.directories = {dir.path()}, .mode = mode, .worker_threads = 1});
    ASSERT_TRUE(config.ok()) << config.status();
    DataLoader loader(CreateStage);
    EXPECT_NO_THROW(loader.Configure(*config));
  }
}

}  // namespace
}  // namespace sluice::audio
