// The completion paths of io::AsyncFileReader that need a read which never
// finishes on its own: a read of an empty pipe stays in the io_uring ring
// until data arrives or it is cancelled (the pread threads cannot read
// pipes; their cancellation is tested on the backend, below).
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "asio/bind_cancellation_slot.hpp"
#include "asio/cancellation_signal.hpp"
#include "asio/co_spawn.hpp"
#include "asio/io_context.hpp"
#include "gtest/gtest.h"
#include "io/async_file_reader.h"
#include "io/internal/pread_threads_backend.h"
#include "io/internal/read_op.h"
#include "tests/io/temp_file.h"

namespace sluice::io {
namespace {

constexpr auto kGenerousWait = std::chrono::seconds(60);

// Both ends of a pipe, closed at destruction.
class Pipe {
 public:
  Pipe() { EXPECT_EQ(pipe(fds_), 0); }
  ~Pipe() {
    close(fds_[0]);
    close(fds_[1]);
  }
  int read_end() const { return fds_[0]; }
  void Write(const std::string& bytes) const {
    EXPECT_EQ(write(fds_[1], bytes.data(), bytes.size()),
              static_cast<ssize_t>(bytes.size()));
  }

 private:
  int fds_[2] = {-1, -1};
};

// One ReadAt, spawned on `io` with a cancellation slot; its outcome.
struct SpawnedRead {
  std::string buffer;
  std::optional<absl::StatusOr<size_t>> result;
  asio::cancellation_signal cancel;

  void Start(asio::io_context& io, AsyncFileReader& reader, int fd,
             size_t length) {
    buffer.assign(length, '\0');
    asio::co_spawn(io, Read(reader, fd),
                   asio::bind_cancellation_slot(
                       cancel.slot(), [](std::exception_ptr error) {
                         if (error) std::rethrow_exception(error);
                       }));
  }

 private:
  asio::awaitable<void> Read(AsyncFileReader& reader, int fd) {
    result = co_await reader.ReadAt(fd, 0,
                                    std::as_writable_bytes(std::span(buffer)));
  }
};

class IoUringCompletionTest : public ::testing::Test {
 protected:
  // Where the kernel refuses rings these paths do not exist (the reader
  // falls back to pread threads, tested below).
  void SetUp() override {
    const std::unique_ptr<AsyncFileReader> probe = MakeReader();
    if (!probe->uses_io_uring()) {
      GTEST_SKIP() << "io_uring unavailable: " << probe->fallback_reason();
    }
  }
  // A reader of one ring that sends every read to it.
  std::unique_ptr<AsyncFileReader> MakeReader(unsigned depth = 8) {
    auto reader = std::make_unique<AsyncFileReader>(
        io_,
        AsyncFileReader::Options{
            .queue_depth = depth, .rings = 1, .cached_reads_inline = false});
    return reader;
  }
  // Runs handlers until `done` holds (each read here completes). The
  // io_context has no work guard: it stops whenever nothing is in flight.
  template <typename Done>
  void RunUntil(Done done) {
    while (!done()) {
      if (io_.stopped()) io_.restart();
      io_.run_one();
    }
  }

  asio::io_context io_;
};

TEST_F(IoUringCompletionTest, ACachedReadThroughAnIdleRingIsServedAtSubmit) {
  std::unique_ptr<AsyncFileReader> reader = MakeReader();
  const TempFile file(256 << 10);  // just written: in the page cache
  SpawnedRead read;
  read.Start(io_, *reader, file.fd(), 64 << 10);
  io_.run();
  ASSERT_TRUE(read.result.has_value());
  ASSERT_TRUE(read.result->ok()) << read.result->status();
  EXPECT_EQ(read.buffer, file.content().substr(0, 64 << 10));
  EXPECT_EQ(reader->counts().backend_reads, 1u);
  EXPECT_EQ(reader->counts().served_at_submit, 1u);
}

TEST_F(IoUringCompletionTest, ReadsBehindABusyRingGoInAtTheEndOfTheTurn) {
  std::unique_ptr<AsyncFileReader> reader = MakeReader();
  const TempFile file(64 << 10);
  const Pipe pipe;
  SpawnedRead stuck;  // keeps the ring busy
  stuck.Start(io_, *reader, pipe.read_end(), 16);
  io_.poll();
  SpawnedRead deferred;
  deferred.Start(io_, *reader, file.fd(), 64 << 10);
  RunUntil([&] { return deferred.result.has_value(); });
  ASSERT_TRUE(deferred.result->ok()) << deferred.result->status();
  EXPECT_EQ(deferred.buffer, file.content());
  EXPECT_EQ(reader->counts().served_at_submit, 0u);
  EXPECT_FALSE(stuck.result.has_value());
  pipe.Write("hello");  // the pipe read completes through the reaper
  RunUntil([&] { return stuck.result.has_value(); });
  ASSERT_TRUE(stuck.result->ok()) << stuck.result->status();
  EXPECT_EQ(**stuck.result, 5u);
  EXPECT_EQ(stuck.buffer.substr(0, 5), "hello");
}

TEST_F(IoUringCompletionTest, AReadThatWaitedResumesOnTheReapersOwnTurn) {
  std::unique_ptr<AsyncFileReader> reader = MakeReader();
  const Pipe pipe;
  SpawnedRead read;
  read.Start(io_, *reader, pipe.read_end(), 16);
  io_.poll();  // submitted, suspended; the reactor watches the ring
  ASSERT_FALSE(read.result.has_value());
  pipe.Write("hello");
  // One handler: the reaper, which finishes the read and resumes its
  // coroutine right there (not on a later turn).
  ASSERT_EQ(io_.run_one(), 1u);
  ASSERT_TRUE(read.result.has_value());
  ASSERT_TRUE(read.result->ok()) << read.result->status();
  EXPECT_EQ(read.buffer.substr(0, 5), "hello");
}

TEST_F(IoUringCompletionTest, ReadsReapedBySubmittersLeaveNoWorkBehind) {
  std::unique_ptr<AsyncFileReader> reader = MakeReader();
  const TempFile file(64 << 10);
  const Pipe pipe;
  SpawnedRead stuck;
  stuck.Start(io_, *reader, pipe.read_end(), 16);
  io_.poll();  // in the ring; the reactor watches it
  // In one turn the pipe read completes (the write returns after its
  // completion is posted) and a file read goes to the busy ring; the
  // submission at the end of the turn reaps both, so the reaper that was
  // watching finds nothing to do.
  std::string buffer(64 << 10, '\0');
  std::optional<absl::StatusOr<size_t>> file_result;
  asio::co_spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        pipe.Write("hello");
        file_result = co_await reader->ReadAt(
            file.fd(), 0, std::as_writable_bytes(std::span(buffer)));
      },
      [](std::exception_ptr error) {
        if (error) std::rethrow_exception(error);
      });
  // run() returns once the reads are done: nothing else counts as work.
  io_.run_for(kGenerousWait);
  EXPECT_TRUE(io_.stopped()) << "the reaper still counted as work";
  ASSERT_TRUE(stuck.result.has_value());
  ASSERT_TRUE(stuck.result->ok()) << stuck.result->status();
  EXPECT_EQ(stuck.buffer.substr(0, 5), "hello");
  ASSERT_TRUE(file_result.has_value());
  ASSERT_TRUE(file_result->ok()) << file_result->status();
  EXPECT_EQ(buffer, file.content());
}

TEST_F(IoUringCompletionTest, ACancelledReadInFlightReturnsCancelled) {
  std::unique_ptr<AsyncFileReader> reader = MakeReader();
  const Pipe pipe;
  SpawnedRead read;
  read.Start(io_, *reader, pipe.read_end(), 16);
  io_.poll();  // submitted, suspended
  ASSERT_FALSE(read.result.has_value());
  read.cancel.emit(asio::cancellation_type::terminal);
  RunUntil([&] { return read.result.has_value(); });
  EXPECT_TRUE(absl::IsCancelled(read.result->status()))
      << read.result->status();
  // The ring goes on: the next read of the pipe gets its bytes.
  SpawnedRead next;
  next.Start(io_, *reader, pipe.read_end(), 16);
  pipe.Write("after");
  RunUntil([&] { return next.result.has_value(); });
  ASSERT_TRUE(next.result->ok()) << next.result->status();
  EXPECT_EQ(next.buffer.substr(0, 5), "after");
}

TEST_F(IoUringCompletionTest, ACancelledReadWaitingForAFullRingEndsAtOnce) {
  std::unique_ptr<AsyncFileReader> reader = MakeReader(/*depth=*/1);
  const TempFile file(4096);
  const Pipe pipe;
  SpawnedRead stuck;  // fills the ring
  stuck.Start(io_, *reader, pipe.read_end(), 16);
  io_.poll();
  SpawnedRead waiting;
  waiting.Start(io_, *reader, file.fd(), 4096);
  io_.poll();
  ASSERT_FALSE(waiting.result.has_value());
  waiting.cancel.emit(asio::cancellation_type::terminal);
  RunUntil([&] { return waiting.result.has_value(); });
  EXPECT_TRUE(absl::IsCancelled(waiting.result->status()))
      << waiting.result->status();
  pipe.Write("x");
  RunUntil([&] { return stuck.result.has_value(); });
  EXPECT_TRUE(stuck.result->ok()) << stuck.result->status();
}

TEST_F(IoUringCompletionTest, DestroyingTheReaderCancelsReadsInFlight) {
  std::unique_ptr<AsyncFileReader> reader = MakeReader(/*depth=*/1);
  const TempFile file(4096);
  const Pipe pipe;
  SpawnedRead in_ring;
  in_ring.Start(io_, *reader, pipe.read_end(), 16);
  io_.poll();
  SpawnedRead waiting;
  waiting.Start(io_, *reader, file.fd(), 4096);
  io_.poll();
  reader.reset();  // returns once the kernel let go of both buffers
  io_.run();
  ASSERT_TRUE(in_ring.result.has_value());
  EXPECT_TRUE(absl::IsCancelled(in_ring.result->status()))
      << in_ring.result->status();
  ASSERT_TRUE(waiting.result.has_value());
  EXPECT_TRUE(absl::IsCancelled(waiting.result->status()))
      << waiting.result->status();
}

// The pread threads: a read not started yet is cancelled at once, and
// destruction cancels the queued ones. With no threads, reads stay queued.
TEST(PreadThreadsBackendTest, QueuedReadsAreCancelledAtOnce) {
  const TempFile file(4096);
  char buffer[16];
  internal::ReadWaiter first_waiter(1);
  internal::ReadWaiter second_waiter(1);
  internal::ReadOp first{.fd = file.fd(),
                         .data = buffer,
                         .length = sizeof(buffer),
                         .waiter = &first_waiter};
  internal::ReadOp second = first;
  second.waiter = &second_waiter;
  internal::ReadOp* const ops[] = {&first, &second};
  {
    internal::PreadThreadsBackend backend(/*threads=*/0);
    backend.Submit(ops);
    backend.Cancel(std::span(ops, 1));
    EXPECT_TRUE(first_waiter.done());
    EXPECT_EQ(first.result, -ECANCELED);
    EXPECT_FALSE(second_waiter.done());
  }
  EXPECT_TRUE(second_waiter.done());
  EXPECT_EQ(second.result, -ECANCELED);
}

TEST(PreadThreadsBackendTest, ReadsRunOnTheThreads) {
  const TempFile file(4096);
  char buffer[16];
  internal::ReadWaiter waiter(1);
  internal::ReadOp op{.fd = file.fd(),
                      .offset = 100,
                      .data = buffer,
                      .length = sizeof(buffer),
                      .waiter = &waiter};
  internal::ReadOp* const ops[] = {&op};
  internal::PreadThreadsBackend backend(/*threads=*/1);
  backend.Submit(ops);
  const auto deadline = std::chrono::steady_clock::now() + kGenerousWait;
  while (!waiter.done() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_TRUE(waiter.done());
  ASSERT_EQ(op.result, 16);
  EXPECT_EQ(std::string(buffer, 16), file.content().substr(100, 16));
}

}  // namespace
}  // namespace sluice::io
