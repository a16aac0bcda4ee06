#include "tests/testing/pipeline_test_util.h"

#include <sys/vfs.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sluice::testing {

TempDir::TempDir(const std::string& parent) {
  std::string pattern =
      ((parent.empty() ? std::filesystem::temp_directory_path()
                       : std::filesystem::path(parent)) /
       "sluice_test_XXXXXX")
          .string();
  char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr) << std::strerror(errno);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::operator/(const std::string& name) const {
  return path_ + "/" + name;
}

std::string TmpfsDirectory() {
  constexpr decltype(statfs::f_type) kTmpfsMagic = 0x01021994;
  struct statfs shm;
  return statfs("/dev/shm", &shm) == 0 && shm.f_type == kTmpfsMagic ? "/dev/shm"
                                                                    : "";
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

void WriteFileAtomically(const std::string& path, const std::string& bytes) {
  const std::filesystem::path target(path);
  const std::string hidden =
      (target.parent_path() /
       absl::StrCat(".", target.filename().string(), ".tmp"))
          .string();
  WriteFile(hidden, bytes);
  std::filesystem::rename(hidden, target);
}

DataLoaderConfig ParseConfig(const std::string& text) {
  DataLoaderConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config))
      << text;
  return config;
}

bool WaitUntil(const std::function<bool()>& condition,
               std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

StageMetricProto StageTotals(DataLoader& loader, const std::string& name) {
  const DataLoaderMetricsProto metrics = loader.GetMetrics();
  for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
    if (stage.name() == name) return stage;
  }
  return {};
}

uint64_t SkipsCounted(const DataLoaderMetricsProto& metrics,
                      const std::string& reason) {
  uint64_t count = 0;
  for (const StageMetricProto& stage : metrics.total_stage_metrics()) {
    for (const SkipCountProto& skip : stage.skipped()) {
      if (skip.reason() == reason) count += skip.count();
    }
  }
  return count;
}

}  // namespace sluice::testing
