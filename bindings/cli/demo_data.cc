#include "bindings/cli/demo_data.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bindings/cli/audio_data.h"
#include "stages/lc0/format/data_generator.h"

namespace sluice::cli {
namespace {

constexpr int kGamesPerTar = 100;
constexpr char kCompleteMarker[] = ".complete";

// The cache root: $SLUICE_CACHE_DIR, $XDG_CACHE_HOME/sluice, ~/.cache/sluice
// or /tmp/sluice-cache.
std::string CacheDirectory() {
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
  return base;
}

// Returns `directory` if it is complete; else runs `write` on a fresh
// temporary sibling, marks that complete and renames it into place (a
// concurrent process finishing first is fine).
absl::StatusOr<std::string> EnsureCached(
    const std::string& directory,
    const std::function<absl::Status(const std::string&)>& write) {
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
  if (absl::Status written = write(staging); !written.ok()) {
    fs::remove_all(staging, error);
    return written;
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

// Writes `games` games in tars of kGamesPerTar into `staging` (to become
// `directory`) on up to 4 threads, with progress lines on `out`.
absl::Status WriteDemoGames(const std::string& directory,
                            const std::string& staging, int games,
                            std::ostream& out) {
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
  return failure;
}

}  // namespace

std::string DemoDataDirectory() { return CacheDirectory() + "/demo-data-v1"; }

absl::StatusOr<std::string> EnsureDemoData(const std::string& directory,
                                           int games, std::ostream& out) {
  return EnsureCached(directory, [&](const std::string& staging) {
    return WriteDemoGames(directory, staging, games, out);
  });
}

std::string AudioDemoDataDirectory(int64_t clips) {
  return absl::StrCat(CacheDirectory(), "/demo-audio-v1-", clips);
}

absl::StatusOr<std::string> EnsureAudioDemoData(const std::string& directory,
                                                int64_t clips,
                                                std::ostream& out) {
  return EnsureCached(directory, [&](const std::string& staging) {
    out << absl::StrFormat(
        "generating the audio demo data set once: %d synthetic clips in 4 "
        "Arrow files into %s\n",
        clips, directory);
    out.flush();
    absl::StatusOr<AudioDataset> written = WriteAudioDataset(
        {.dir = staging, .clips = clips, .files = 4, .seed = 2026});
    if (!written.ok()) return written.status();
    out << absl::StrFormat("  %d clips, %.0f s of audio, %.0f MB\n",
                           written->clips, written->audio_seconds,
                           written->file_bytes / 1e6);
    return absl::OkStatus();
  });
}

}  // namespace sluice::cli
