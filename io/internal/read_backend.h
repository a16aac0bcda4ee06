// ReadBackend: what io::AsyncFileReader hands its reads to — io_uring
// rings (io_uring_backend.h) or blocking pread threads
// (pread_threads_backend.h).
#ifndef SLUICE_IO_INTERNAL_READ_BACKEND_H_
#define SLUICE_IO_INTERNAL_READ_BACKEND_H_

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "io/internal/read_op.h"

namespace sluice::io::internal {

class ReadBackend : public OpCanceller {
 public:
  ~ReadBackend() override = default;
  // "io_uring" or "pread-threads".
  virtual std::string_view name() const = 0;
  // Ring setup flags in use, for the log ("coop_taskrun submit_all ..."); empty
  // for the threads.
  virtual std::string features() const { return {}; }
  // Takes `ops` and finishes each exactly once (ReadOp::Finish); ops that
  // can be served while this call runs (a read of the page cache through
  // an idle ring) are finished before it returns, on the calling thread.
  virtual void Submit(std::span<ReadOp* const> ops) = 0;
  // Puts `region` in slot `index` of the table of registered buffers
  // (an empty region clears the slot). Unimplemented where reads cannot use
  // it (then ops keep buffer_index -1).
  virtual absl::Status SetRegisteredBuffer(int /*index*/,
                                           std::span<std::byte> /*region*/) {
    return absl::UnimplementedError("registered buffers need io_uring");
  }
  // Puts `fd` (-1 clears) in slot `index` of the table of registered files.
  virtual absl::Status SetRegisteredFile(int /*index*/, int /*fd*/) {
    return absl::UnimplementedError("registered files need io_uring");
  }
};

}  // namespace sluice::io::internal

#endif  // SLUICE_IO_INTERNAL_READ_BACKEND_H_
