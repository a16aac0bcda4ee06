#include "bindings/cli/reader_job.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <exception>
#include <span>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asio/co_spawn.hpp"
#include "asio/io_context.hpp"
#include "io/aligned_buffer.h"
#include "io/async_file_reader.h"
#include "io/direct_file.h"

namespace sluice::cli {
namespace {

using Clock = std::chrono::steady_clock;
using Request = io::AsyncFileReader::ReadRequest;

// One file of the job, open for a pass (or for all of them).
struct OpenFile {
  io::ReadableFile file;
  uint64_t blocks = 0;
  io::AsyncFileReader::Registration registration;
};

// What the reading coroutines share (one thread: no locks).
struct Pass {
  io::AsyncFileReader& reader;
  const ReaderJob& job;
  const std::vector<OpenFile>& files;
  int buffer_slot = -1;
  std::deque<std::span<std::byte>> free_buffers;  // front: next to use
  size_t file = 0;  // the cursor: block `block` of files[file]
  uint64_t block = 0;
  bool may_stop = false;  // the passes asked for are done
  Clock::time_point deadline;
  uint64_t bytes = 0;
  absl::Status failure;

  // The next block to read, or false when the pass (or the time) is over.
  bool Next(const OpenFile** file_out, uint64_t* block_out) {
    if (!failure.ok() || (may_stop && Clock::now() >= deadline)) return false;
    while (file < files.size() && block >= files[file].blocks) {
      ++file;
      block = 0;
    }
    if (file == files.size()) return false;
    *file_out = &files[file];
    *block_out = block++;
    return true;
  }
};

// One of the job's `queue_depth` readers.
asio::awaitable<void> ReadBlocks(Pass& pass) {
  const OpenFile* file = nullptr;
  uint64_t block = 0;
  while (pass.Next(&file, &block)) {
    const std::span<std::byte> buffer = pass.free_buffers.front();
    pass.free_buffers.pop_front();
    const Request request{.fd = file->file.fd,
                          .offset = block * pass.job.block_bytes,
                          .buffer = buffer,
                          .direct_alignment = file->file.direct_alignment,
                          .registered_buffer = pass.buffer_slot,
                          .registered_file = file->registration.index()};
    absl::StatusOr<size_t> got = co_await pass.reader.ReadAt(request);
    pass.free_buffers.push_back(buffer);
    if (!got.ok()) {
      pass.failure = got.status();
      co_return;
    }
    pass.bytes += *got;
  }
}

// Opens the job's files (inside the clock): sequential advice, the
// eviction of a cold pass, the registration of the file.
absl::StatusOr<std::vector<OpenFile>> OpenFiles(const ReaderJob& job,
                                                io::AsyncFileReader& reader,
                                                bool evict,
                                                ReaderResult& result) {
  std::vector<OpenFile> files;
  files.reserve(job.paths.size());
  for (const std::string& path : job.paths) {
    absl::StatusOr<io::ReadableFile> opened =
        io::OpenForReading(path, job.direct);
    if (!opened.ok()) return opened.status();
    OpenFile& file = files.emplace_back();
    file.file = *opened;
    if (!opened->refusal.empty()) {
      ++result.direct_refused;
      result.refusal = opened->refusal;
    }
    struct stat info;
    if (fstat(file.file.fd, &info) != 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot stat '", path, "': ", std::strerror(errno)));
    }
    uint64_t bytes = static_cast<uint64_t>(info.st_size);
    if (job.region_bytes > 0) bytes = std::min(bytes, job.region_bytes);
    file.blocks = job.whole_blocks_only
                      ? bytes / job.block_bytes
                      : (bytes + job.block_bytes - 1) / job.block_bytes;
    posix_fadvise(file.file.fd, 0, static_cast<off_t>(bytes),
                  POSIX_FADV_SEQUENTIAL);
    if (evict) {
      posix_fadvise(file.file.fd, 0, static_cast<off_t>(bytes),
                    POSIX_FADV_DONTNEED);
    }
    if (job.registered) {
      absl::StatusOr<io::AsyncFileReader::Registration> registration =
          reader.RegisterFile(file.file.fd);
      if (!registration.ok()) return registration.status();
      file.registration = *std::move(registration);
    }
  }
  return files;
}

void CloseFiles(std::vector<OpenFile>& files) {
  for (OpenFile& file : files) {
    file.registration = {};
    close(file.file.fd);
  }
  files.clear();
}

}  // namespace

absl::StatusOr<ReaderResult> RunReaderJob(const ReaderJob& job) {
  const unsigned depth = std::max(job.queue_depth, 1u);
  asio::io_context io(1);
  io::AsyncFileReader reader(io,
                             {.use_io_uring = job.use_io_uring,
                              .queue_depth = depth,
                              .rings = 1,
                              .cached_reads_inline = job.cached_reads_inline});
  if (job.use_io_uring && !reader.uses_io_uring()) {
    return absl::UnavailableError(
        absl::StrCat("io_uring unavailable: ", reader.fallback_reason()));
  }
  // The buffers: one allocation, page-aligned slices, touched once.
  const uint64_t stride =
      (job.block_bytes + io::AlignedBuffer::kPageBytes - 1) /
      io::AlignedBuffer::kPageBytes * io::AlignedBuffer::kPageBytes;
  io::AlignedBuffer region(stride * depth);
  std::memset(region.data(), 0, region.size());
  io::AsyncFileReader::Registration buffer_registration;
  if (job.registered) {
    absl::StatusOr<io::AsyncFileReader::Registration> registration =
        reader.RegisterBuffer(region.span());
    if (!registration.ok()) return registration.status();
    buffer_registration = *std::move(registration);
  }

  ReaderResult result;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(job.min_seconds));
  std::vector<OpenFile> files;
  for (int pass_index = 0;; ++pass_index) {
    const bool may_stop = pass_index >= job.passes;
    if (may_stop && Clock::now() >= deadline) break;
    if (files.empty()) {
      absl::StatusOr<std::vector<OpenFile>> opened =
          OpenFiles(job, reader, job.evict_each_pass, result);
      if (!opened.ok()) return opened.status();
      files = *std::move(opened);
    }
    Pass pass{.reader = reader,
              .job = job,
              .files = files,
              .buffer_slot = buffer_registration.index(),
              .may_stop = may_stop,
              .deadline = deadline};
    for (unsigned i = 0; i < depth; ++i) {
      pass.free_buffers.push_back(
          region.span().subspan(i * stride, job.block_bytes));
    }
    for (unsigned i = 0; i < depth; ++i) {
      asio::co_spawn(io, ReadBlocks(pass), RethrowErrors);
    }
    io.run();
    io.restart();
    if (!pass.failure.ok()) return pass.failure;
    result.bytes += pass.bytes;
    if (pass.bytes == 0) break;  // nothing to read
    if (job.evict_each_pass) CloseFiles(files);
  }
  CloseFiles(files);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

void RethrowErrors(std::exception_ptr error) {
  if (error) std::rethrow_exception(error);
}

}  // namespace sluice::cli
