#include "stages/generic/file_path_provider.h"

#include <sys/inotify.h>

#include <chrono>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/log.h"
#include "engine/status_macros.h"
#include "engine/yield.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

// Directory entries handled between two yields to the event loop.
constexpr int kEntriesPerYield = 256;

constexpr uint32_t kWatchMask =
    IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE_SELF | IN_ONLYDIR;

bool Hidden(const std::string& name) { return !name.empty() && name[0] == '.'; }

}  // namespace

absl::StatusOr<std::unique_ptr<Stage>> FilePathProvider::Create(
    const StageContext& context) {
  SLUICE_RETURN_IF_ERROR(context.RequireNoInputs());
  const FilePathProviderConfig& config = context.config().file_path_provider();
  if (config.directory().empty()) {
    return context.FieldError("directory", "must name at least one directory");
  }
  for (const std::string& directory : config.directory()) {
    std::error_code error;
    if (!fs::is_directory(directory, error)) {
      return context.FieldError(
          "directory", absl::StrCat("'", directory, "' is not a directory"));
    }
  }
  return std::unique_ptr<Stage>(new FilePathProvider(context, config));
}

FilePathProvider::FilePathProvider(const StageContext& context,
                                   const FilePathProviderConfig& config)
    : Stage(context),
      config_(config),
      watch_(config.mode() == FilePathProviderConfig::WATCH),
      output_(AddOutput<DiscoveredFile>("output", 1024)) {}

void FilePathProvider::Start(const StageRuntime& runtime) {
  if (watch_) {
    absl::StatusOr<std::unique_ptr<io::InotifyWatcher>> watcher =
        io::InotifyWatcher::Create(runtime.executor->get());
    if (watcher.ok()) {
      watcher_ = *std::move(watcher);
    } else {
      watcher_error_ = watcher.status();
    }
  }
  SpawnWorkers(runtime, 1, [this](int) { return Run(); });
}

void FilePathProvider::Stop() {
  Stage::Stop();
  std::lock_guard lock(watcher_mu_);
  if (watcher_ != nullptr) watcher_->Cancel();
}

asio::awaitable<void> FilePathProvider::Run() {
  // Destroys the watcher when this coroutine ends, however it ends.
  struct ReleaseWatcher {
    ~ReleaseWatcher() {
      std::lock_guard lock(self->watcher_mu_);
      self->watcher_.reset();
    }
    FilePathProvider* self;
  } release{this};
  if (!watcher_error_.ok()) {
    throw std::runtime_error(
        absl::StrCat("cannot watch directories: ", watcher_error_.ToString()));
  }
  const auto started = std::chrono::steady_clock::now();
  for (const std::string& directory : config_.directory()) {
    if (!co_await ScanTree(directory, DiscoveryPhase::kInitialScan)) co_return;
  }
  initial_scan_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  initial_scan_files_ = initial_scan_count_;
  DiscoveredFile marker{"", DiscoveryPhase::kInitialScanComplete};
  if (!co_await output_->Send(std::move(marker), load_meter())) {
    co_return;
  }
  initial_scan_complete_ = true;
  LogInfo("stage ", name(), ": initial scan complete, ",
          initial_scan_files_.load(), " files in ",
          initial_scan_seconds_.load(), " s");
  if (!watch_) co_return;
  while (true) {
    absl::StatusOr<std::vector<io::InotifyWatcher::Event>> events;
    {
      ScopedWait wait(load_meter());
      events = co_await watcher_->Read();
    }
    if (absl::IsCancelled(events.status())) co_return;
    if (!events.ok()) throw std::runtime_error(events.status().ToString());
    if (!co_await HandleEvents(*std::move(events))) co_return;
  }
}

void FilePathProvider::Watch(const std::string& directory) {
  if (!watch_) return;
  absl::StatusOr<int> wd = watcher_->AddWatch(directory, kWatchMask);
  if (!wd.ok()) {
    CountSkip("directory_not_watched");
    static RateLimiter limiter(absl::Seconds(5));
    if (limiter.Allow()) LogWarning("stage ", name(), ": ", wd.status());
    return;
  }
  watched_[*wd] = directory;
  directories_watched_ = watched_.size();
}

asio::awaitable<bool> FilePathProvider::ScanTree(std::string root,
                                                 DiscoveryPhase phase) {
  std::vector<std::string> pending = {std::move(root)};
  int handled = 0;
  while (!pending.empty()) {
    const std::string directory = std::move(pending.back());
    pending.pop_back();
    Watch(directory);
    std::error_code error;
    fs::directory_iterator it(directory, error), end;
    for (; !error && it != end; it.increment(error)) {
      if (++handled % kEntriesPerYield == 0) {
        co_await YieldToOtherCoroutines();
      }
      const std::string name = it->path().filename().string();
      if (Hidden(name)) continue;
      std::error_code type_error;
      if (it->is_directory(type_error) && !it->is_symlink(type_error)) {
        if (config_.recursive()) pending.push_back(it->path().string());
      } else if (it->is_regular_file(type_error)) {
        std::string path = it->path().string();
        if (watch_) scanned_.insert(path);
        if (!co_await Offer(std::move(path), phase)) co_return false;
      }
    }
    if (error) CountSkip("directory_unreadable");
  }
  co_return true;
}

asio::awaitable<bool> FilePathProvider::HandleEvents(
    std::vector<io::InotifyWatcher::Event> events) {
  for (io::InotifyWatcher::Event& event : events) {
    if (event.mask & IN_Q_OVERFLOW) {
      inotify_overflows_.fetch_add(1);
      LogWarning("stage ", name(), ": inotify queue overflow, events lost");
      continue;
    }
    auto watched = watched_.find(event.wd);
    if (watched == watched_.end()) continue;
    if (event.mask & IN_IGNORED) {  // removed, unmounted or unwatched
      watched_.erase(watched);
      directories_watched_ = watched_.size();
      directories_removed_.fetch_add(1);
      continue;
    }
    if (event.name.empty() || Hidden(event.name)) continue;
    std::string path = absl::StrCat(watched->second, "/", event.name);
    if (event.mask & IN_ISDIR) {
      if (config_.recursive() && (event.mask & (IN_CREATE | IN_MOVED_TO))) {
        if (!co_await ScanTree(std::move(path), DiscoveryPhase::kNew)) {
          co_return false;
        }
      }
      continue;
    }
    if (!(event.mask & (IN_CLOSE_WRITE | IN_MOVED_TO))) continue;
    if (scanned_.erase(path) > 0) continue;  // a scan offered it already
    if (!co_await Offer(std::move(path), DiscoveryPhase::kNew)) co_return false;
  }
  co_return true;
}

asio::awaitable<bool> FilePathProvider::Offer(std::string path,
                                              DiscoveryPhase phase) {
  // Named, not a temporary inside co_await: GCC 12 miscompiles braced
  // temporaries in co_await operands.
  DiscoveredFile file{std::move(path), phase};
  if (!co_await output_->Send(std::move(file), load_meter())) {
    co_return false;
  }
  files_offered_.fetch_add(1);
  if (phase == DiscoveryPhase::kInitialScan) ++initial_scan_count_;
  co_return true;
}

void FilePathProvider::AddMetrics(StageMetricProto& metrics) {
  FilePathProviderMetricsProto& out = *metrics.mutable_file_path_provider();
  out.set_files_offered(files_offered_.exchange(0));
  out.set_initial_scan_complete(initial_scan_complete_ ? 1 : 0);
  out.set_initial_scan_files(initial_scan_files_);
  out.set_initial_scan_seconds(initial_scan_seconds_);
  out.set_directories_watched(directories_watched_);
  out.set_directories_removed(directories_removed_.exchange(0));
  out.set_inotify_overflows(inotify_overflows_.exchange(0));
}

}  // namespace sluice
