#include "bindings/cli/fio_comparison.h"

#include <fcntl.h>
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

// Cold: the file's pages dropped; warm: the file read once.
absl::Status PrepareCache(const FioJob& job) {
  FileSet file;
  file.paths = {job.path};
  if (!job.warm) return DropFromPageCache(file);
  return MeasureRead(file, ReadMethod::kPread, 1 << 20, 1).status();
}

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

std::vector<std::string> FioArguments(const FioJob& job) {
  std::vector<std::string> args = {
      "fio",
      "--name=sluice-compare",
      absl::StrCat("--filename=", job.path),
      "--rw=read",
      absl::StrCat("--bs=", job.block_bytes),
      "--ioengine=io_uring",
      absl::StrCat("--iodepth=", job.queue_depth),
      "--direct=0",
      "--numjobs=1",
      "--output-format=json",
  };
  if (job.warm) {
    args.insert(args.end(), {"--invalidate=0", "--time_based",
                             absl::StrCat("--runtime=", job.seconds)});
  } else {
    args.insert(args.end(),
                {"--invalidate=1", absl::StrCat("--loops=", job.passes)});
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
  if (absl::Status status = PrepareCache(job); !status.ok()) return status;
  FileSet file;
  file.paths = {job.path};
  if (job.warm) {
    absl::StatusOr<ReadResult> result =
        MeasureRead(file, ReadMethod::kIoUring, job.block_bytes,
                    job.queue_depth, job.seconds);
    if (!result.ok()) return result.status();
    return result->GigabytesPerSecond();
  }
  ReadResult total;
  for (int pass = 0; pass < job.passes; ++pass) {
    if (absl::Status status = DropFromPageCache(file); !status.ok()) {
      return status;
    }
    absl::StatusOr<ReadResult> result = MeasureRead(
        file, ReadMethod::kIoUring, job.block_bytes, job.queue_depth);
    if (!result.ok()) return result.status();
    total.bytes += result->bytes;
    total.seconds += result->seconds;
  }
  return total.GigabytesPerSecond();
}

int ColdPasses(uint64_t file_bytes) {
  constexpr uint64_t kColdBytes = uint64_t{256} << 20;
  if (file_bytes == 0) return 1;
  return static_cast<int>(
      std::clamp<uint64_t>((kColdBytes + file_bytes - 1) / file_bytes, 1, 200));
}

}  // namespace sluice::cli
