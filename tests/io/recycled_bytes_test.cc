#include "io/recycled_bytes.h"

#include <cstring>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace sluice::io {
namespace {

TEST(RecycledBytesTest, ReadsLikeAString) {
  RecycledBytes bytes = std::string("\x1f\x8b rest");
  EXPECT_EQ(bytes.size(), 7u);
  EXPECT_EQ(bytes.substr(0, 2), "\x1f\x8b");
  EXPECT_EQ(std::string_view(bytes), "\x1f\x8b rest");
  RecycledBytes copy = bytes;
  copy[3] = 'R';
  EXPECT_EQ(bytes, "\x1f\x8b rest");
  EXPECT_EQ(copy, "\x1f\x8b Rest");
  copy.resize(3);
  EXPECT_EQ(copy, "\x1f\x8b ");
  copy.resize(100'000);  // grows past its buffer: the prefix is kept
  EXPECT_EQ(copy.substr(0, 3), "\x1f\x8b ");
  RecycledBytes moved = std::move(bytes);
  EXPECT_TRUE(bytes.empty());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved, "\x1f\x8b rest");
  EXPECT_TRUE(RecycledBytes().empty());
}

TEST(RecycledBytesTest, ForOverwriteRecyclesBuffersOfEverySize) {
  for (size_t size : {size_t{1}, size_t{4096}, size_t{37'000}, size_t{4} << 20,
                      (size_t{4} << 20) + 1}) {
    SCOPED_TRACE(size);
    const char* first = nullptr;
    {
      RecycledBytes bytes = RecycledBytes::ForOverwrite(size);
      ASSERT_EQ(bytes.size(), size);
      std::memset(bytes.data(), 'x', size);
      first = bytes.data();
    }
    RecycledBytes again = RecycledBytes::ForOverwrite(size);
    ASSERT_EQ(again.size(), size);
    std::memset(again.data(), 'y', size);
    // Up to 4 MiB the buffer just given back is the one taken next.
    if (size <= (size_t{4} << 20)) {
      EXPECT_EQ(again.data(), first);
    }
  }
}

TEST(RecycledBytesTest, BuffersGoBackFromAnyThread) {
  const char* first = nullptr;
  std::thread([&first] {
    RecycledBytes bytes = RecycledBytes::ForOverwrite(5000);
    first = bytes.data();
  }).join();
  RecycledBytes again = RecycledBytes::ForOverwrite(5000);
  EXPECT_EQ(again.data(), first);
}

}  // namespace
}  // namespace sluice::io
