// `sluice demo --workload audio` and `sluice run` of the audio example
// pipelines, in-process, on a small generated clip set.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "bindings/cli/audio_data.h"
#include "bindings/cli/demo_command.h"
#include "bindings/cli/run_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/bindings/cli/invoke_command.h"

namespace sluice::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// 120 clips in 2 files, two of them damaged, shared by the tests.
class AudioCommandsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // One directory per process: ctest runs each test in its own process.
    data_ = new std::string(
        (fs::path(::testing::TempDir()) /
         ("sluice_audio_commands_test_" + std::to_string(getpid())))
            .string());
    fs::remove_all(*data_);
    auto written = WriteAudioDataset(
        {.dir = *data_, .clips = 120, .files = 2, .corrupt_every = 60});
    ASSERT_TRUE(written.ok()) << written.status();
  }
  static void TearDownTestSuite() {
    fs::remove_all(*data_);
    delete data_;
  }
  static std::string* data_;
};
std::string* AudioCommandsTest::data_ = nullptr;

TEST_F(AudioCommandsTest, DemoRunsTheAudioWorkloadAndCountsClips) {
  // Two batches, however slow the machine (sanitizers, a loaded host): the
  // test pins what the demo shows, not how fast it is.
  const Result result =
      Invoke(RunDemoCommand, {"--workload", "audio", "--data", *data_,
                              "--seconds", "600", "--batches", "2"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("default audio training pipeline"));
  EXPECT_THAT(result.out, HasSubstr("clips/s on average"));
  EXPECT_THAT(result.out, Not(HasSubstr(" 0 clips/s on average")));
  EXPECT_THAT(result.out, Not(HasSubstr("positions/s")));
  EXPECT_THAT(result.out, HasSubstr("bottleneck:"));
  EXPECT_THAT(result.out, HasSubstr("audio_train.textproto"));
  EXPECT_THAT(result.out, Not(HasSubstr("\x1b")));
}

TEST_F(AudioCommandsTest, DemoRefusesAnUnknownWorkload) {
  const Result result = Invoke(RunDemoCommand, {"--workload", "video"});
  EXPECT_EQ(result.code, 2);
  EXPECT_THAT(result.err,
              HasSubstr("sluice demo: bad value 'video' for --workload"));
}

TEST_F(AudioCommandsTest, RunReadsEveryGoodClipWithTheEvalExample) {
  const Result result = Invoke(
      RunRunCommand, {"proto/examples/audio_eval.textproto", "--data", *data_});
  ASSERT_EQ(result.code, 0) << result.err;
  // 118 good clips in batches of 256: one batch, then end of stream; the
  // two damaged ones named in the decoder's summary line.
  EXPECT_THAT(result.out, HasSubstr("clips/s on average"));
  EXPECT_THAT(result.out, HasSubstr("skipped:"));
}

TEST_F(AudioCommandsTest, RunStreamsTheTrainExample) {
  // The shipped training example as it is but for its reservoir: 10000
  // slots that emit once 8000 are in would decode the 118 clips 68 times
  // before the first batch. 300 slots and a fill of 200 pin the same path.
  std::ifstream example("proto/examples/audio_train.textproto");
  std::string text((std::istreambuf_iterator<char>(example)),
                   std::istreambuf_iterator<char>());
  const std::string reservoir = "shuffle_buffer { size: 10000 min_fill: 8000 }";
  const size_t at = text.find(reservoir);
  ASSERT_NE(at, std::string::npos) << "the example's reservoir changed";
  text.replace(at, reservoir.size(),
               "shuffle_buffer { size: 300 min_fill: 200 }");
  const fs::path config =
      fs::path(*data_).parent_path() /
      ("audio_train_" + std::to_string(getpid()) + ".textproto");
  std::ofstream(config) << text;

  const Result result = Invoke(
      RunRunCommand, {config.string(), "--data", *data_, "--batches", "2"});
  fs::remove(config);
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("clips/s on average"));
  EXPECT_THAT(result.out, Not(HasSubstr(" 0 clips/s on average")));
}

}  // namespace
}  // namespace sluice::cli
