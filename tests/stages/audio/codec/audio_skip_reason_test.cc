#include "stages/audio/codec/audio_skip_reason.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace sluice::audio {
namespace {

constexpr AudioSkipReason kAll[] = {
    AudioSkipReason::kEmptyClip,       AudioSkipReason::kNotAudio,
    AudioSkipReason::kMalformed,       AudioSkipReason::kUnsupportedEncoding,
    AudioSkipReason::kTooManyChannels, AudioSkipReason::kTooLong,
    AudioSkipReason::kLengthMismatch,  AudioSkipReason::kTruncated,
};

TEST(AudioSkipReasonTest, NamesAreStableAndDistinct) {
  EXPECT_EQ(AudioSkipReasonName(AudioSkipReason::kNotAudio), "not_audio");
  EXPECT_EQ(AudioSkipReasonName(AudioSkipReason::kLengthMismatch),
            "length_mismatch");
  std::set<std::string_view> names;
  for (AudioSkipReason reason : kAll) names.insert(AudioSkipReasonName(reason));
  EXPECT_EQ(names.size(), std::size(kAll));
}

TEST(AudioSkipReasonTest, StatusCarriesTheReason) {
  for (AudioSkipReason reason : kAll) {
    const absl::Status status = AudioSkipStatus(reason, "details");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(),
              std::string(AudioSkipReasonName(reason)) + ": details");
    EXPECT_EQ(AudioSkipReasonOf(status), reason);
  }
}

TEST(AudioSkipReasonTest, OtherStatusesCarryNoReason) {
  EXPECT_EQ(AudioSkipReasonOf(absl::OkStatus()), std::nullopt);
  EXPECT_EQ(AudioSkipReasonOf(absl::InvalidArgumentError("not_audio: x")),
            std::nullopt);
}

}  // namespace
}  // namespace sluice::audio
