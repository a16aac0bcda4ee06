#include "stages/lc0/format/tensor_expansion.h"

#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "io/gzip.h"
#include "stages/lc0/format/packed_expander.h"
#include "stages/lc0/format/packed_record.h"
#include "stages/lc0/format/record_upconvert.h"
#include "stages/lc0/format/record_validator.h"
#include "tests/testing/npz_reader.h"

namespace sluice::lc0 {
namespace {

constexpr char kGoldenDir[] = "tests/data/golden/";

TEST(TensorExpanderTest, RejectsUnsupportedFormats) {
  for (uint32_t format : {0u, 6u, 131u, 134u}) {
    EXPECT_EQ(TensorExpander::Create(format).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  for (uint32_t format : {1u, 2u, 3u, 4u, 5u, 132u, 133u}) {
    EXPECT_TRUE(TensorExpander::Create(format).ok()) << format;
  }
}

TEST(TensorExpanderTest, SquareJReadsBitJXor7) {
  V6TrainingRecord rec;
  std::memset(&rec, 0, sizeof(rec));
  rec.version = 6;
  rec.input_format = 1;
  rec.planes[0] = uint64_t{1} << 7;   // square 0
  rec.planes[1] = uint64_t{1};        // square 7
  rec.planes[2] = uint64_t{1} << 56;  // square 63
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(1);
  ASSERT_TRUE(batch.ok());
  TensorExpander::Create(1)->Expand(rec, &*batch, 0);
  const float* planes = batch->planes(0);
  for (int p = 0; p < 3; ++p) {
    for (int j = 0; j < 64; ++j) {
      const bool set =
          (p == 0 && j == 0) || (p == 1 && j == 7) || (p == 2 && j == 63);
      ASSERT_EQ(planes[p * 64 + j], set ? 1.0f : 0.0f) << p << "/" << j;
    }
  }
}

// Index of the first float that differs bitwise, or -1.
int64_t FirstDifference(const float* got, const std::string& want) {
  const size_t n = want.size() / sizeof(float);
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(got + i, want.data() + i * sizeof(float), 4) != 0) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

// Decompress, check, up-convert and expand every record of the fixture,
// as it is and packed (the tensor generator's path); every float must equal
// the reference reader's bit for bit.
TEST_P(GoldenTest, MatchesTheReferenceReaderBitForBit) {
  const std::string base = kGoldenDir + GetParam();
  absl::StatusOr<std::string> gz =
      sluice::testing::ReadFileToString(base + ".gz");
  ASSERT_TRUE(gz.ok()) << gz.status();
  absl::StatusOr<std::string> chunk = io::Gunzip(*gz, 64 << 20);
  ASSERT_TRUE(chunk.ok()) << chunk.status();
  absl::StatusOr<sluice::testing::NpzFile> npz =
      sluice::testing::ReadNpz(base + ".npz");
  ASSERT_TRUE(npz.ok()) << npz.status();
  ASSERT_TRUE(npz->contains("input_format"));
  const sluice::testing::NpyArray& format_array = npz->at("input_format");
  ASSERT_EQ(format_array.dtype, "<i4");
  int32_t format;
  std::memcpy(&format, format_array.data.data(), 4);

  const ChunkCheck check = CheckChunk(*chunk);
  ASSERT_FALSE(check.reject.has_value())
      << RejectReasonName(check.reject.value());
  absl::StatusOr<TensorExpander> expander = TensorExpander::Create(format);
  ASSERT_TRUE(expander.ok()) << expander.status();
  absl::StatusOr<TensorBatch> batch = TensorBatch::Create(check.record_count);
  absl::StatusOr<TensorBatch> from_packed =
      TensorBatch::Create(check.record_count);
  ASSERT_TRUE(batch.ok() && from_packed.ok());
  PackedExpander packed_expander(*expander);
  for (size_t i = 0; i < check.record_count; ++i) {
    V6TrainingRecord rec;
    UpconvertToV6(std::string_view(*chunk).substr(i * check.record_size,
                                                  check.record_size),
                  check.version, &rec);
    std::optional<RejectReason> reason =
        CheckRecord(rec, check.version, format);
    ASSERT_FALSE(reason.has_value())
        << "record " << i << ": " << RejectReasonName(*reason);
    expander->Expand(rec, &*batch, i);
    packed_expander.Expand(PackedRecord::Pack(rec), &*from_packed, i);
  }

  for (TensorId id : {TensorId::kPlanes, TensorId::kProbs, TensorId::kWinner,
                      TensorId::kBestQ, TensorId::kPliesLeft}) {
    const TensorView view = batch->view(id);
    SCOPED_TRACE(std::string(view.name));
    ASSERT_TRUE(npz->contains(std::string(view.name)));
    const sluice::testing::NpyArray& want = npz->at(std::string(view.name));
    EXPECT_EQ(want.dtype, "<f4");
    ASSERT_EQ(want.shape.size(), static_cast<size_t>(view.rank));
    for (int d = 0; d < view.rank; ++d) EXPECT_EQ(want.shape[d], view.shape[d]);
    ASSERT_EQ(want.data.size(), view.bytes);
    EXPECT_EQ(std::memcmp(view.data, want.data.data(), view.bytes), 0)
        << "first differing float: " << FirstDifference(view.data, want.data);
    const TensorView packed_view = from_packed->view(id);
    EXPECT_EQ(std::memcmp(packed_view.data, want.data.data(), view.bytes), 0)
        << "packed: first differing float: "
        << FirstDifference(packed_view.data, want.data);
  }
}

INSTANTIATE_TEST_SUITE_P(AllFixtures, GoldenTest,
                         ::testing::Values("v3", "v4", "v5_fmt1", "v6_fmt1_a",
                                           "v6_fmt1_b", "v6_fmt1_plies0",
                                           "v6_fmt2", "v6_fmt3", "v6_fmt4",
                                           "v6_fmt5", "v6_fmt132", "v6_fmt133"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace sluice::lc0
