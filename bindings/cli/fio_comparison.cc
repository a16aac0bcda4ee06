#include "bindings/cli/fio_comparison.h"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "bindings/cli/io_throughput.h"
#include "nlohmann/json.hpp"

extern char** environ;

namespace sluice::cli {
namespace {

absl::Status DropFromPageCache(const FileSet& file) {
  if (!EvictFromPageCache(file)) {
    return absl::UnavailableError(
        "cannot drop the file from the page cache (posix_fadvise)");
  }
  return absl::OkStatus();
}

// Cold and direct: the file's pages dropped; warm: the file read once.
absl::Status PrepareCache(const FioJob& job) {
  FileSet file;
  file.paths = {job.path};
  if (job.cache != FioCache::kWarm) return DropFromPageCache(file);
  return MeasureRead(file, ReadMethod::kPread, 1 << 20, 1).status();
}

// Restricts the calling thread to one CPU while alive, then restores its
// CPUs.
class ThreadPin {
 public:
  explicit ThreadPin(int cpu) {
    if (cpu < 0 || sched_getaffinity(0, sizeof(saved_), &saved_) != 0) return;
    cpu_set_t only;
    CPU_ZERO(&only);
    CPU_SET(cpu, &only);
    pinned_ = sched_setaffinity(0, sizeof(only), &only) == 0;
  }
  ~ThreadPin() {
    if (pinned_) sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  ThreadPin(const ThreadPin&) = delete;
  ThreadPin& operator=(const ThreadPin&) = delete;

 private:
  cpu_set_t saved_;
  bool pinned_ = false;
};

// Runs `argv` with stdout and stderr captured; its output, or an error with
// the output's last line when it cannot start or exits non-zero.
absl::StatusOr<std::string> CaptureOutput(
    const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return absl::UnavailableError(std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned =
      posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    return absl::UnavailableError(
        absl::StrCat("cannot run ", argv[0], ": ", std::strerror(spawned)));
  }
  std::string output;
  char buffer[4096];
  ssize_t got;
  while ((got = read(pipe_fds[0], buffer, sizeof(buffer))) != 0) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    output.append(buffer, got);
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string_view last_line(output);
    while (last_line.ends_with('\n')) last_line.remove_suffix(1);
    last_line = last_line.substr(last_line.rfind('\n') + 1);
    return absl::UnavailableError(absl::StrCat(argv[0], " failed (exit status ",
                                               WEXITSTATUS(status),
                                               "): ", std::string(last_line)));
  }
  return output;
}

}  // namespace

const char* FioCacheName(FioCache cache) {
  switch (cache) {
    case FioCache::kCold:
      return "cold";
    case FioCache::kWarm:
      return "warm";
    case FioCache::kDirect:
      return "direct";
  }
  return "?";
}

std::vector<std::string> FioArguments(const FioJob& job) {
  std::vector<std::string> args = {
      "fio",
      "--name=sluice-compare",
      absl::StrCat("--filename=", job.path),
      "--rw=read",
      absl::StrCat("--bs=", job.block_bytes),
      "--ioengine=io_uring",
      absl::StrCat("--iodepth=", job.queue_depth),
      absl::StrCat("--direct=", job.cache == FioCache::kDirect ? 1 : 0),
      "--fadvise_hint=1",
      "--iomem=mmap",
      "--numjobs=1",
      "--output-format=json",
  };
  if (job.cpu >= 0) args.push_back(absl::StrCat("--cpus_allowed=", job.cpu));
  if (job.registered)
    args.insert(args.end(), {"--fixedbufs", "--registerfiles"});
  switch (job.cache) {
    case FioCache::kWarm:
      args.insert(args.end(), {"--invalidate=0", "--time_based",
                               absl::StrCat("--runtime=", job.seconds)});
      break;
    case FioCache::kCold:
      args.insert(args.end(),
                  {"--invalidate=1", absl::StrCat("--loops=", job.passes)});
      if (job.region_bytes > 0) {
        args.push_back(absl::StrCat("--size=", job.region_bytes));
      }
      break;
    case FioCache::kDirect:
      args.insert(args.end(), {"--invalidate=1", "--time_based",
                               absl::StrCat("--runtime=", job.seconds)});
      break;
  }
  return args;
}

absl::StatusOr<double> ParseFioReadBandwidth(std::string_view json) {
  // fio may print notes before its JSON object.
  const size_t open = json.find('{');
  if (open == std::string_view::npos) {
    return absl::InvalidArgumentError("fio printed no JSON");
  }
  const nlohmann::json parsed = nlohmann::json::parse(
      json.substr(open), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.contains("jobs") ||
      !parsed["jobs"].is_array() || parsed["jobs"].empty()) {
    return absl::InvalidArgumentError("fio's JSON has no jobs");
  }
  const nlohmann::json& job = parsed["jobs"][0];
  if (!job.contains("read") || !job["read"].contains("bw_bytes") ||
      !job["read"]["bw_bytes"].is_number()) {
    return absl::InvalidArgumentError("fio's JSON has no read.bw_bytes");
  }
  return job["read"]["bw_bytes"].get<double>() / 1e9;
}

bool FioInstalled() { return CaptureOutput({"fio", "--version"}).ok(); }

absl::StatusOr<double> RunFio(const FioJob& job) {
  if (absl::Status status = PrepareCache(job); !status.ok()) return status;
  absl::StatusOr<std::string> output = CaptureOutput(FioArguments(job));
  if (!output.ok()) return output.status();
  return ParseFioReadBandwidth(*output);
}

absl::StatusOr<double> RunSluice(const FioJob& job) {
  absl::StatusOr<ReaderResult> result = RunSluiceJob(job);
  if (!result.ok()) return result.status();
  return result->GigabytesPerSecond();
}

absl::StatusOr<ReaderResult> RunSluiceJob(const FioJob& job) {
  if (absl::Status status = PrepareCache(job); !status.ok()) return status;
  ReaderJob reader_job{.paths = {job.path},
                       .block_bytes = job.block_bytes,
                       .queue_depth = job.queue_depth,
                       .whole_blocks_only = true,
                       .direct = job.cache == FioCache::kDirect,
                       .registered = job.registered,
                       .cached_reads_inline = job.sluice_default_path};
  if (job.cache == FioCache::kCold) {
    reader_job.region_bytes = job.region_bytes;
    reader_job.evict_each_pass = true;
    reader_job.passes = job.passes;
  } else {
    reader_job.min_seconds = job.seconds;
  }
  absl::StatusOr<ReaderResult> result;
  {
    const ThreadPin pin(job.cpu);
    result = RunReaderJob(reader_job);
  }
  if (!result.ok()) return result.status();
  if (result->direct_refused > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("O_DIRECT refused: ", result->refusal));
  }
  return result;
}

uint64_t ColdRegionBytes(uint64_t file_bytes) {
  constexpr uint64_t kMaxColdRegion = uint64_t{1} << 30;
  return file_bytes > kMaxColdRegion ? kMaxColdRegion : 0;
}

int ColdPasses(uint64_t file_bytes) {
  constexpr uint64_t kColdBytes = uint64_t{256} << 20;
  if (file_bytes == 0) return 1;
  return static_cast<int>(
      std::clamp<uint64_t>((kColdBytes + file_bytes - 1) / file_bytes, 1, 200));
}

}  // namespace sluice::cli
