// FilePathProvider: discovers data files (any workload). Source stage, no
// inputs; output "output" of DiscoveredFile.
//
// 1. Initial scan of every configured directory (recursively unless
//    `recursive: false`), in slices that yield to the event loop: each
//    regular file is sent with phase kInitialScan, then one marker with
//    phase kInitialScanComplete; the stage logs "initial scan complete" and
//    sets the `initial_scan_complete` metric.
// 2. `once` mode: the output closes after the marker.
//    `watch` mode (default): inotify watches, placed on each directory
//    before it is listed, report files that are complete: closed after
//    writing (IN_CLOSE_WRITE) or renamed into place (IN_MOVED_TO); a file
//    still being written is not offered. New subdirectories are watched and
//    scanned. Each new file is sent once with phase kNew. Events are read
//    through an asio stream_descriptor awaited on the event loop.
//
// Names starting with '.' are ignored (writers use hidden temporary names
// and rename). Files found by a scan are taken as complete. A watched
// directory that is removed is counted (`directories_removed`); the stage
// goes on. An inotify queue overflow is counted and logged (events lost).
// Stop() ends the stage at once, even while it waits for events.
#ifndef SLUICE_STAGES_GENERIC_FILE_PATH_PROVIDER_H_
#define SLUICE_STAGES_GENERIC_FILE_PATH_PROVIDER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/stage.h"
#include "io/inotify_watcher.h"
#include "stages/generic/discovered_file.h"

namespace sluice {

class FilePathProvider final : public Stage {
 public:
  // Validates the config: at least one directory, each an existing
  // directory; no inputs.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;
  void Stop() override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  FilePathProvider(const StageContext& context,
                   const FilePathProviderConfig& config);
  asio::awaitable<void> Run();
  // Watches (in watch mode) and lists `root` and, when recursive, its
  // subdirectories, sending each file with `phase`. False once the output
  // is cancelled.
  asio::awaitable<bool> ScanTree(std::string root, DiscoveryPhase phase);
  // Handles one batch of inotify events; false once the output is
  // cancelled.
  asio::awaitable<bool> HandleEvents(
      std::vector<io::InotifyWatcher::Event> events);
  asio::awaitable<bool> Offer(std::string path, DiscoveryPhase phase);
  void Watch(const std::string& directory);

  const FilePathProviderConfig config_;
  const bool watch_;
  Channel<DiscoveredFile>* const output_;
  // Watch mode: made in Start(), destroyed when Run() ends (while the event
  // loop still exists; the pipeline destroys its executor before its
  // stages). watcher_mu_ orders that against Stop().
  std::mutex watcher_mu_;
  std::unique_ptr<io::InotifyWatcher> watcher_;
  absl::Status watcher_error_;
  // Touched only by the Run() coroutine.
  std::unordered_map<int, std::string> watched_;  // wd -> directory
  // Files a scan offered, so that their own late event is not a second offer.
  std::unordered_set<std::string> scanned_;
  uint64_t initial_scan_count_ = 0;

  std::atomic<uint64_t> files_offered_{0};
  std::atomic<bool> initial_scan_complete_{false};
  std::atomic<uint64_t> initial_scan_files_{0};
  std::atomic<double> initial_scan_seconds_{0};
  std::atomic<uint64_t> directories_watched_{0};
  std::atomic<uint64_t> directories_removed_{0};
  std::atomic<uint64_t> inotify_overflows_{0};
};

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_FILE_PATH_PROVIDER_H_
