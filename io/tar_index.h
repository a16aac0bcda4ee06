// Tar indexing: the name, data offset and size of every regular file in a
// plain (uncompressed) tar archive, found by hopping from header to header
// without reading member data.
//
// Understands ustar (with the `prefix` field), old v7 headers, GNU long names
// (`L`; `K` long link names are skipped) and pax headers (`x` overrides the
// next member's `path` and `size`; `g` global headers are skipped).
//
// TarIndexer is a pull parser that never does I/O itself, so the same code
// runs over synchronous pread (IndexTarFile below) and over asynchronous
// io_uring reads in a stage:
//
//   TarIndexer indexer(file_size);
//   while (std::optional<TarReadRequest> read = indexer.NextRead()) {
//     std::string bytes = ReadAt(read->offset, read->length);  // may be short
//     indexer.OnData(bytes);  // the error is also kept in the index
//   }
//   TarIndex index = indexer.TakeIndex();
//
// Damage policy: indexing stops at the first problem (bad checksum, a header
// cut off by EOF, a member running past EOF, a limit exceeded). The members
// indexed before it are complete and kept; `TarIndex::error` says what
// stopped indexing. A caller keeps the good members and counts the archive
// as damaged. A zero-length file is a valid, empty archive.
#ifndef SLUICE_IO_TAR_INDEX_H_
#define SLUICE_IO_TAR_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sluice::io {

inline constexpr size_t kTarBlockSize = 512;

// One regular file inside an archive: its bytes are [data_offset,
// data_offset + size) of the archive file.
struct TarMember {
  std::string name;
  uint64_t data_offset = 0;
  uint64_t size = 0;

  friend bool operator==(const TarMember&, const TarMember&) = default;
};

// Bounds that keep a hostile archive from exhausting memory.
struct TarLimits {
  uint64_t max_members = 1'000'000;  // regular files kept
  size_t max_name_length = 4096;     // bytes, after long-name / pax expansion
  size_t max_pax_size = 1 << 20;     // bytes of one `x` header's payload
};

// A read the indexer needs: `length` bytes at `offset`. Never past the file
// size given to the indexer.
struct TarReadRequest {
  uint64_t offset = 0;
  size_t length = 0;
};

// The result of indexing one archive.
struct TarIndex {
  // Regular files in archive order, each complete within the file.
  std::vector<TarMember> members;
  // OK when the archive ended cleanly (two zero blocks, one zero block, or
  // EOF at a header boundary). Otherwise why indexing stopped early
  // (DataLoss for damage, ResourceExhausted for a TarLimits bound); `members`
  // then holds the members before the damage.
  absl::Status error;
};

// Incremental tar header parser. Not thread-safe; one archive per instance.
class TarIndexer {
 public:
  // `file_size` is the archive's size in bytes; reads never go past it.
  explicit TarIndexer(uint64_t file_size, TarLimits limits = {});

  // The next bytes the indexer needs, or nullopt once indexing is finished
  // (cleanly or not). Calling it again without OnData returns the same read.
  std::optional<TarReadRequest> NextRead() const;

  // Feeds the bytes of the read last returned by NextRead(). Fewer bytes
  // than asked mean the file ended early. Returns the error that stopped
  // indexing, if any (it is also recorded in the index), and
  // FailedPrecondition when called while no read is pending.
  absl::Status OnData(std::string_view bytes);

  // True once NextRead() returns nullopt.
  bool finished() const { return state_ == State::kFinished; }

  // Moves out the index built so far. Meant for after finished().
  TarIndex TakeIndex();

 private:
  enum class State { kHeader, kLongName, kPax, kFinished };

  absl::Status OnHeader(std::string_view block);
  absl::Status OnLongName(std::string_view payload);
  absl::Status OnPax(std::string_view payload);
  // Moves on to the header at `offset`, or finishes when the file ends.
  void AdvanceTo(uint64_t offset);
  absl::Status Fail(absl::Status error);

  uint64_t file_size_;
  TarLimits limits_;
  State state_ = State::kHeader;
  TarReadRequest pending_;
  // Overrides collected from `L` and `x` headers for the next member.
  std::optional<std::string> next_name_;
  std::optional<uint64_t> next_size_;
  TarIndex index_;
};

// Indexes the tar archive open on `fd` (of `file_size` bytes) with pread.
// Fails only on I/O errors; damage is reported in TarIndex::error.
absl::StatusOr<TarIndex> IndexTarFile(int fd, uint64_t file_size,
                                      const TarLimits& limits = {});

}  // namespace sluice::io

#endif  // SLUICE_IO_TAR_INDEX_H_
