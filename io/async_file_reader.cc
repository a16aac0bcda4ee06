#include "io/async_file_reader.h"

#include <sys/uio.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "io/aligned_buffer.h"
#include "io/internal/bounce_pool.h"
#include "io/internal/io_uring_backend.h"
#include "io/internal/pread_threads_backend.h"
#include "io/internal/read_op.h"

namespace sluice::io {
namespace {

using internal::ReadOp;
using internal::ReadWaiter;

std::atomic<AsyncFileReader::FaultInjector> fault_injector{nullptr};

// The most one read call asks for (the ring's length field is 32 bits).
constexpr size_t kMaxReadBytes = size_t{1} << 30;

bool IoUringDisabledByEnvironment() {
  const char* value = std::getenv("SLUICE_DISABLE_IO_URING");
  return value != nullptr && std::string(value) != "0" && *value != '\0';
}

// Tells `observer` of a finished ReadAt or ReadBatchAt.
void Observe(AsyncFileReader::ReadObserver* observer,
             std::chrono::steady_clock::time_point begin,
             std::span<const absl::StatusOr<size_t>> results,
             size_t from_page_cache) {
  uint64_t bytes = 0;
  for (const absl::StatusOr<size_t>& result : results) {
    if (result.ok()) bytes += *result;
  }
  observer->OnReads(begin, std::chrono::steady_clock::now(), results.size(),
                    bytes, from_page_cache);
}

absl::Status ReadError(int error_number, int fd, uint64_t offset) {
  return absl::Status(absl::ErrnoToStatusCode(error_number),
                      absl::StrCat("read of fd ", fd, " at offset ", offset,
                                   ": ", std::strerror(error_number)));
}

// One request on its way through the backend: what of it was copied from
// the page cache already, the aligned buffer an O_DIRECT read goes through
// when the request itself is not aligned, and the op handed to the backend.
class PendingRead {
 public:
  using ReadRequest = AsyncFileReader::ReadRequest;

  // Sets up the op for the rest of `request` after `copied` bytes; true
  // when it reads through a bounce buffer.
  PendingRead() = default;
  PendingRead(PendingRead&&) = default;
  ~PendingRead() {
    if (bounces_ != nullptr) bounces_->Give(std::move(bounce_));
  }

  bool Prepare(const ReadRequest& request, size_t copied, ReadWaiter* waiter,
               const std::shared_ptr<internal::BouncePool>& bounces,
               std::atomic<uint64_t>* delivered_bytes) {
    copied_ = copied;
    const size_t size = std::min(request.buffer.size(), kMaxReadBytes);
    op_.fd = request.fd;
    op_.file_index = request.registered_file;
    op_.waiter = waiter;
    op_.delivered_bytes = delivered_bytes;
    const uint64_t align = request.direct_alignment;
    const bool aligned =
        align <= 1 || ((request.offset | size |
                        reinterpret_cast<uintptr_t>(request.buffer.data())) %
                           align ==
                       0);
    if (aligned) {
      op_.offset = request.offset + copied;
      op_.data = request.buffer.data() + copied;
      op_.length = static_cast<unsigned>(size - copied);
      op_.buffer_index = request.registered_buffer;
      return false;
    }
    const uint64_t start = request.offset / align * align;
    const uint64_t end = (request.offset + size + align - 1) / align * align;
    lead_ = request.offset - start;
    op_.delivered_lead = static_cast<unsigned>(lead_);
    op_.delivered_cap = static_cast<unsigned>(size);
    bounces_ = bounces;
    bounce_ = bounces->Take(end - start);
    op_.offset = start;
    op_.data = bounce_.data();
    op_.length = static_cast<unsigned>(end - start);
    return true;
  }

  ReadOp* op() { return &op_; }

  // What ReadAt returns for `request` once the op has finished.
  absl::StatusOr<size_t> Result(const ReadRequest& request) const {
    if (op_.result < 0) {
      if (copied_ > 0) return copied_;  // a short read; the next one fails
      return ReadError(-op_.result, request.fd, request.offset);
    }
    const size_t got = static_cast<size_t>(op_.result);
    if (bounce_.data() == nullptr) return copied_ + got;
    if (got <= lead_) return size_t{0};
    const size_t bytes = std::min(got - lead_, request.buffer.size());
    std::memcpy(request.buffer.data(), bounce_.data() + lead_, bytes);
    return bytes;
  }

 private:
  size_t copied_ = 0;
  // Where bounce_ goes back to: shared, since a read finished by the
  // reader's destruction may resume after the reader is gone.
  std::shared_ptr<internal::BouncePool> bounces_;
  AlignedBuffer bounce_;
  size_t lead_ = 0;
  ReadOp op_;
};

}  // namespace

AsyncFileReader::Registration& AsyncFileReader::Registration::operator=(
    Registration&& other) noexcept {
  if (this != &other) {
    Clear();
    reader_ = std::exchange(other.reader_, nullptr);
    kind_ = other.kind_;
    index_ = std::exchange(other.index_, -1);
  }
  return *this;
}

AsyncFileReader::Registration::~Registration() { Clear(); }

void AsyncFileReader::Registration::Clear() {
  if (reader_ == nullptr || index_ < 0) return;
  if (kind_ == Kind::kBuffer) {
    reader_->backend_->SetRegisteredBuffer(index_, {}).IgnoreError();
  } else {
    reader_->backend_->SetRegisteredFile(index_, -1).IgnoreError();
  }
  reader_->ReleaseSlot(kind_, index_);
  reader_ = nullptr;
  index_ = -1;
}

AsyncFileReader::AsyncFileReader(asio::io_context& io_context, Options options)
    : bounces_(std::make_shared<internal::BouncePool>()),
      cached_reads_inline_(options.cached_reads_inline) {
  if (options.use_io_uring && !IoUringDisabledByEnvironment()) {
    const unsigned rings =
        options.rings != 0
            ? options.rings
            : std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    backend_ = internal::IoUringBackend::Create(io_context, options.queue_depth,
                                                rings, &fallback_reason_);
  } else {
    fallback_reason_ = options.use_io_uring
                           ? "disabled by SLUICE_DISABLE_IO_URING"
                           : "disabled by configuration";
  }
  if (backend_ == nullptr) {
    backend_ = std::make_unique<internal::PreadThreadsBackend>(
        std::max(1u, options.fallback_threads));
  }
}

AsyncFileReader::~AsyncFileReader() {
  // The backend finishes every read still out (and counts its bytes)
  // while the reader's counters are still alive.
  backend_.reset();
}

std::string_view AsyncFileReader::backend_name() const {
  return backend_->name();
}

bool AsyncFileReader::uses_io_uring() const {
  return backend_name() == "io_uring";
}

std::string AsyncFileReader::features() const { return backend_->features(); }

AsyncFileReader::Counts AsyncFileReader::counts() const {
  return {.inline_reads = inline_reads_.load(std::memory_order_relaxed),
          .backend_reads = backend_reads_.load(std::memory_order_relaxed),
          .inline_bytes = inline_bytes_.load(std::memory_order_relaxed),
          .backend_bytes = backend_bytes_.load(std::memory_order_relaxed),
          .served_at_submit = served_at_submit_.load(std::memory_order_relaxed),
          .bounced_reads = bounced_reads_.load(std::memory_order_relaxed)};
}

std::optional<size_t> AsyncFileReader::CopyCached(const ReadRequest& request) {
  iovec part{request.buffer.data(),
             std::min<size_t>(request.buffer.size(), kMaxReadBytes)};
  ssize_t got;
  do {
    got = ::preadv2(request.fd, &part, 1, static_cast<off_t>(request.offset),
                    RWF_NOWAIT);
  } while (got < 0 && errno == EINTR);
  if (got >= 0) return static_cast<size_t>(got);
  // EAGAIN: not all in the page cache. Any other error is the backend's to
  // report; only a missing syscall (old kernels, seccomp) turns this off.
  if (errno == ENOSYS) {
    cached_reads_inline_.store(false, std::memory_order_relaxed);
  }
  return std::nullopt;
}

void AsyncFileReader::SetFaultInjectorForTesting(FaultInjector injector) {
  fault_injector.store(injector);
}

asio::awaitable<absl::StatusOr<size_t>> AsyncFileReader::ReadAt(
    ReadRequest request) {
  // An observer (a trace) is told by ReadBatchAt; without one, a single
  // read takes the shorter path below.
  if (observer_.load(std::memory_order_acquire) != nullptr) {
    std::vector<absl::StatusOr<size_t>> got =
        co_await ReadBatchAt(std::span(&request, 1));
    co_return std::move(got.front());
  }
  if (FaultInjector injector = fault_injector.load(std::memory_order_relaxed)) {
    if (std::optional<int> error = injector(request.fd, request.offset)) {
      co_return ReadError(*error, request.fd, request.offset);
    }
  }
  size_t copied = 0;
  if (request.direct_alignment == 0 &&
      cached_reads_inline_.load(std::memory_order_relaxed)) {
    if (std::optional<size_t> got = CopyCached(request)) {
      inline_reads_.fetch_add(1, std::memory_order_relaxed);
      inline_bytes_.fetch_add(*got, std::memory_order_relaxed);
      // A short copy stops at end of file or at a page not yet cached: the
      // backend reads the rest (and finds end of file if it is).
      if (*got == 0 || *got == request.buffer.size()) co_return *got;
      copied = *got;
    }
  }
  ReadWaiter waiter(1);
  PendingRead read;
  if (read.Prepare(request, copied, &waiter, bounces_, &backend_bytes_)) {
    bounced_reads_.fetch_add(1, std::memory_order_relaxed);
  }
  backend_reads_.fetch_add(1, std::memory_order_relaxed);
  ReadOp* const ops[1] = {read.op()};
  backend_->Submit(ops);
  if (waiter.done()) {
    served_at_submit_.fetch_add(1, std::memory_order_relaxed);
  } else {
    co_await waiter.Wait(ops, *backend_);
  }
  co_return read.Result(request);
}

asio::awaitable<std::vector<absl::StatusOr<size_t>>>
AsyncFileReader::ReadBatchAt(std::span<const ReadRequest> requests) {
  ReadObserver* const observer = observer_.load(std::memory_order_acquire);
  const auto begin = observer != nullptr
                         ? std::chrono::steady_clock::now()
                         : std::chrono::steady_clock::time_point();
  std::vector<absl::StatusOr<size_t>> results(requests.size());
  // The requests that go to the backend (not failed by the injector, not
  // served whole from the page cache), and what of each was copied already.
  std::vector<size_t> issued;
  std::vector<size_t> copied;
  size_t from_page_cache = 0;
  FaultInjector injector = fault_injector.load(std::memory_order_relaxed);
  for (size_t i = 0; i < requests.size(); ++i) {
    const ReadRequest& request = requests[i];
    if (injector != nullptr) {
      if (std::optional<int> error = injector(request.fd, request.offset)) {
        results[i] = ReadError(*error, request.fd, request.offset);
        continue;
      }
    }
    size_t cached = 0;
    if (request.direct_alignment == 0 &&
        cached_reads_inline_.load(std::memory_order_relaxed)) {
      if (std::optional<size_t> got = CopyCached(request)) {
        inline_reads_.fetch_add(1, std::memory_order_relaxed);
        inline_bytes_.fetch_add(*got, std::memory_order_relaxed);
        // A short copy stops at end of file or at a page not yet cached:
        // the backend reads the rest (and finds end of file if it is).
        if (*got == 0 || *got == request.buffer.size()) {
          results[i] = *got;
          ++from_page_cache;
          continue;
        }
        cached = *got;
      }
    }
    issued.push_back(i);
    copied.push_back(cached);
  }
  if (issued.empty()) {
    if (observer != nullptr) Observe(observer, begin, results, from_page_cache);
    co_return results;
  }
  ReadWaiter waiter(issued.size());
  std::vector<PendingRead> reads(issued.size());
  std::vector<ReadOp*> ops(issued.size());
  for (size_t k = 0; k < issued.size(); ++k) {
    if (reads[k].Prepare(requests[issued[k]], copied[k], &waiter, bounces_,
                         &backend_bytes_)) {
      bounced_reads_.fetch_add(1, std::memory_order_relaxed);
    }
    ops[k] = reads[k].op();
  }
  backend_reads_.fetch_add(issued.size(), std::memory_order_relaxed);
  backend_->Submit(ops);
  if (waiter.done()) {
    served_at_submit_.fetch_add(ops.size(), std::memory_order_relaxed);
  } else {
    co_await waiter.Wait(ops, *backend_);
  }
  for (size_t k = 0; k < issued.size(); ++k) {
    results[issued[k]] = reads[k].Result(requests[issued[k]]);
  }
  if (observer != nullptr) Observe(observer, begin, results, from_page_cache);
  co_return results;
}

asio::awaitable<absl::StatusOr<size_t>> AsyncFileReader::ReadFullyAt(
    ReadRequest request) {
  size_t total = 0;
  while (total < request.buffer.size()) {
    ReadRequest rest = request;
    rest.offset += total;
    rest.buffer = request.buffer.subspan(total);
    absl::StatusOr<size_t> got = co_await ReadAt(rest);
    if (!got.ok()) co_return got.status();
    if (*got == 0) break;
    total += *got;
  }
  co_return total;
}

absl::StatusOr<AsyncFileReader::Registration> AsyncFileReader::RegisterBuffer(
    std::span<std::byte> region) {
  const int slot = TakeSlot(Registration::Kind::kBuffer);
  if (slot < 0) {
    return absl::ResourceExhaustedError(
        "every registered-buffer slot is taken");
  }
  if (absl::Status status = backend_->SetRegisteredBuffer(slot, region);
      !status.ok()) {
    ReleaseSlot(Registration::Kind::kBuffer, slot);
    return status;
  }
  return Registration(this, Registration::Kind::kBuffer, slot);
}

absl::StatusOr<AsyncFileReader::Registration> AsyncFileReader::RegisterFile(
    int fd) {
  const int slot = TakeSlot(Registration::Kind::kFile);
  if (slot < 0) {
    return absl::ResourceExhaustedError("every registered-file slot is taken");
  }
  if (absl::Status status = backend_->SetRegisteredFile(slot, fd);
      !status.ok()) {
    ReleaseSlot(Registration::Kind::kFile, slot);
    return status;
  }
  return Registration(this, Registration::Kind::kFile, slot);
}

int AsyncFileReader::TakeSlot(Registration::Kind kind) {
  std::lock_guard lock(slots_mu_);
  uint64_t& used = kind == Registration::Kind::kBuffer ? buffer_slots_used_
                                                       : file_slots_used_;
  static_assert(internal::IoUringBackend::kRegisteredSlots == 64);
  if (~used == 0) return -1;
  const int slot = std::countr_one(used);
  used |= uint64_t{1} << slot;
  return slot;
}

void AsyncFileReader::ReleaseSlot(Registration::Kind kind, int index) {
  std::lock_guard lock(slots_mu_);
  uint64_t& used = kind == Registration::Kind::kBuffer ? buffer_slots_used_
                                                       : file_slots_used_;
  used &= ~(uint64_t{1} << index);
}

}  // namespace sluice::io
