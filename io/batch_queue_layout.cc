#include "io/batch_queue_layout.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sluice {
namespace {

constexpr std::string_view kSuffix = ".safetensors";

absl::StatusOr<std::vector<std::string>> ListNames(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  if (error == std::errc::no_such_file_or_directory) return names;
  if (error) {
    return absl::InternalError(
        absl::StrCat("list ", dir, ": ", error.message()));
  }
  for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (error) break;
    names.push_back(it->path().filename().string());
  }
  if (error) {
    return absl::InternalError(
        absl::StrCat("list ", dir, ": ", error.message()));
  }
  return names;
}

}  // namespace

std::string QueueDir(const std::string& root, const std::string& split) {
  return absl::StrCat(root, "/queue/", split);
}

std::string QuarantineDir(const std::string& root) {
  return absl::StrCat(root, "/quarantine");
}

std::string QueueFileName(int64_t timestamp_ms, int64_t sequence,
                          int64_t num_batches) {
  return absl::StrFormat("%d-%06d-%d%s", timestamp_ms, sequence, num_batches,
                         std::string(kSuffix));
}

std::optional<QueueFile> ParseQueueFileName(std::string_view name) {
  if (name.size() <= kSuffix.size() ||
      name.substr(name.size() - kSuffix.size()) != kSuffix) {
    return std::nullopt;
  }
  std::string_view stem = name.substr(0, name.size() - kSuffix.size());
  int64_t parts[3];
  for (int i = 0; i < 3; ++i) {
    const size_t dash = i < 2 ? stem.find('-') : stem.size();
    if (dash == std::string_view::npos || dash == 0 || dash > 18) {
      return std::nullopt;
    }
    int64_t value = 0;
    for (char c : stem.substr(0, dash)) {
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + (c - '0');
    }
    parts[i] = value;
    stem = stem.substr(std::min(dash + 1, stem.size()));
  }
  return QueueFile{.timestamp_ms = parts[0],
                   .sequence = parts[1],
                   .num_batches = parts[2],
                   .name = std::string(name)};
}

absl::StatusOr<std::vector<QueueFile>> ListQueueFiles(const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> names = ListNames(dir);
  if (!names.ok()) return names.status();
  std::vector<QueueFile> files;
  for (const std::string& name : *names) {
    if (std::optional<QueueFile> file = ParseQueueFileName(name)) {
      files.push_back(*std::move(file));
    }
  }
  std::sort(files.begin(), files.end(),
            [](const QueueFile& a, const QueueFile& b) {
              return std::tie(a.timestamp_ms, a.sequence, a.name) <
                     std::tie(b.timestamp_ms, b.sequence, b.name);
            });
  return files;
}

absl::StatusOr<int64_t> NextQueueSequence(const std::string& dir) {
  absl::StatusOr<std::vector<QueueFile>> files = ListQueueFiles(dir);
  if (!files.ok()) return files.status();
  int64_t largest = 0;
  for (const QueueFile& file : *files) {
    largest = std::max(largest, file.sequence);
  }
  return largest + 1;
}

absl::StatusOr<std::vector<QueueFile>> ListLegacyFiles(
    const std::string& root, const std::string& split) {
  absl::StatusOr<std::vector<std::string>> names = ListNames(root);
  if (!names.ok()) return names.status();
  const std::string prefix = absl::StrCat(split, "_batches_");
  std::vector<QueueFile> files;
  for (const std::string& name : *names) {
    if (name.size() > prefix.size() + kSuffix.size() &&
        name.compare(0, prefix.size(), prefix) == 0 &&
        name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) ==
            0) {
      files.push_back(QueueFile{.name = name});
    }
  }
  std::sort(
      files.begin(), files.end(),
      [](const QueueFile& a, const QueueFile& b) { return a.name < b.name; });
  return files;
}

absl::Status RemoveTemporaries(const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> names = ListNames(dir);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    if (name.size() > 5 && name[0] == '.' &&
        name.compare(name.size() - 4, 4, ".tmp") == 0) {
      std::error_code error;
      std::filesystem::remove(absl::StrCat(dir, "/", name), error);
      if (error) {
        return absl::InternalError(
            absl::StrCat("remove ", dir, "/", name, ": ", error.message()));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status MakeDirs(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("mkdir ", dir, ": ", error.message()));
  }
  return absl::OkStatus();
}

}  // namespace sluice
