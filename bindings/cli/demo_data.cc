#include "bindings/cli/demo_data.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "stages/lc0/format/data_generator.h"

namespace sluice::cli {
namespace {

constexpr int kGamesPerTar = 100;
constexpr char kCompleteMarker[] = ".complete";

}  // namespace

std::string DemoDataDirectory() {
  std::string base;
  if (const char* cache = std::getenv("SLUICE_CACHE_DIR"); cache && *cache) {
    base = cache;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    base = absl::StrCat(xdg, "/sluice");
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    base = absl::StrCat(home, "/.cache/sluice");
  } else {
    base = "/tmp/sluice-cache";
  }
  return base + "/demo-data-v1";
}

absl::StatusOr<std::string> EnsureDemoData(const std::string& directory,
                                           int games, std::ostream& out) {
  namespace fs = std::filesystem;
  if (fs::exists(fs::path(directory) / kCompleteMarker)) return directory;
  const std::string staging =
      absl::StrCat(directory, ".tmp-", static_cast<long>(getpid()));
  std::error_code error;
  fs::remove_all(staging, error);
  fs::create_directories(staging, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot create '", staging, "': ", error.message()));
  }
  const int tars = (games + kGamesPerTar - 1) / kGamesPerTar;
  out << absl::StrFormat(
      "generating the demo data set once: %d synthetic games in %d tars into "
      "%s\n",
      games, tars, directory);
  out.flush();
  std::atomic<int> next_tar{0};
  std::atomic<int> done{0};
  std::atomic<uint64_t> bytes{0};
  absl::Status failure;
  std::mutex failure_mu;
  auto writer = [&] {
    for (int tar = next_tar++; tar < tars; tar = next_tar++) {
      const int first = tar * kGamesPerTar;
      absl::StatusOr<lc0::GeneratedFiles> files = lc0::WriteGames(
          {.seed = 2026}, {.mode = lc0::OutputMode::kTar,
                           .dir = staging,
                           .games = std::min(kGamesPerTar, games - first),
                           .first_game = first,
                           .games_per_tar = kGamesPerTar});
      if (!files.ok()) {
        std::lock_guard lock(failure_mu);
        failure = files.status();
        return;
      }
      bytes += files->file_bytes;
      const int finished = ++done;
      if (finished % 5 == 0 || finished == tars) {
        out << absl::StrFormat("  %d/%d tars, %.0f MB\n", finished, tars,
                               bytes.load() / 1e6);
        out.flush();
      }
    }
  };
  std::vector<std::thread> threads;
  const unsigned count =
      std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  for (unsigned i = 0; i < count; ++i) threads.emplace_back(writer);
  for (std::thread& thread : threads) thread.join();
  if (!failure.ok()) {
    fs::remove_all(staging, error);
    return failure;
  }
  if (FILE* marker =
          std::fopen((staging + "/" + kCompleteMarker).c_str(), "w")) {
    std::fclose(marker);
  }
  fs::create_directories(fs::path(directory).parent_path(), error);
  fs::rename(staging, directory, error);
  if (error) {
    // Another process may have finished the same data set first.
    fs::remove_all(staging, error);
    if (!fs::exists(fs::path(directory) / kCompleteMarker)) {
      return absl::UnavailableError(
          absl::StrCat("cannot move the demo data into '", directory, "'"));
    }
  }
  return directory;
}

}  // namespace sluice::cli
