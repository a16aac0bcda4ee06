// The items of the lc0 chunk feed, from discovery to the chunk pool:
//
//   FilePathProvider --DiscoveredFile--> ChunkSourceLoader
//     --ChunkSourceItem--> [ChunkSourceSplitter] --ChunkSourceItem-->
//     ShufflingChunkPool --Chunk--> (ChunkValidator, ChunkUnpacker, ...)
//
// A *chunk* is one game: a gzip stream of training records. A *chunk
// source* is one file holding chunks: a plain tar archive of `.gz` members
// (non-`.gz` members and macOS AppleDouble members are ignored) or one loose
// `.gz` file. Its sort key is its file name (lc0 names sort chronologically).
//
// A ChunkSource is opened by the loader (cheap: open + fstat, no reads) and
// indexed later by the stage that owns it (the pool), so that a directory
// of thousands of old archives costs nothing beyond the newest window:
//
//   auto source = ChunkSource::Open("/data/training-20250101-0017.tar");
//   absl::Status damage = co_await (*source)->Index(reader);  // tar headers
//   for (size_t i = 0; i < (*source)->size(); ++i) {
//     absl::StatusOr<Chunk> chunk = co_await (*source)->ReadChunk(reader, i);
//   }
#ifndef SLUICE_STAGES_LC0_CHUNK_H_
#define SLUICE_STAGES_LC0_CHUNK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "asio/awaitable.hpp"
#include "io/async_file_reader.h"
#include "io/recycled_bytes.h"
#include "stages/generic/discovered_file.h"

namespace sluice::lc0 {

// The bytes of one chunk: recycled, never zero-filled (io/recycled_bytes.h).
using ChunkBytes = io::RecycledBytes;

// One chunk: its gzip bytes and where it comes from. `index_in_source` is
// the chunk's position among the `.gz` members of the whole file (filtered
// views keep the original numbering), so (source_name, index_in_source)
// names a chunk stably across runs, machines and splits.
struct Chunk {
  std::string source_name;
  uint64_t index_in_source = 0;
  // The pool's pass over its window that emitted this chunk (0, 1, ...).
  uint64_t pass = 0;
  // The pool's number of the chunk (stable within a run and across a
  // resume) and its place in the pool's output of this run.
  uint64_t number = 0;
  uint64_t position = 0;
  // Set on the chunks a resumed pool reads first: only these records are
  // wanted, as restored frames (Frame::kRestoredFrame). A chunk without
  // data and with `end_of_restore` follows them.
  std::vector<uint32_t> restore_records;
  bool end_of_restore = false;
  // A chunk read again for a resume whose first `skip_frames` frames (by
  // Frame::ordinal) were taken in before: only the frames after them are
  // wanted.
  uint32_t skip_frames = 0;
  // The compressed chunk (starts with the gzip magic bytes), or, when
  // `decompressed`, its records as they are (a rescorer's output).
  ChunkBytes data;
  bool decompressed = false;

  // ChunkId(source_name, index_in_source).
  uint64_t id() const;
};

// A stable 64-bit identity of chunk `index_in_source` of `source_name`
// (FNV-1a + splitmix; identical on every machine). Seed per-chunk
// randomness downstream with it.
uint64_t ChunkId(std::string_view source_name, uint64_t index_in_source);

// Keeps chunk `index_in_source` of source `source_name` when true. Applied
// while indexing (see ChunkSource::WithFilter).
using ChunkFilter =
    std::function<bool(std::string_view source_name, uint64_t index_in_source)>;

// Bytes [offset, offset + size) of the source file hold chunk
// `index_in_source`.
struct ChunkLocation {
  uint64_t index_in_source = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

class ChunkSource {
 public:
  enum class Kind { kTar, kGzip };

  // The kind a path names by its extension (`.tar`, `.gz`), or nullopt.
  static std::optional<Kind> KindOf(std::string_view path);

  // Opens `path` (its kind must be KindOf(path)): a tar keeps its file
  // descriptor open for the source's lifetime; a loose `.gz` keeps none
  // (ReadChunk opens it), so a window of a million loose chunks does not
  // exhaust descriptors. Does no reads. Errors: NotFound (gone),
  // PermissionDenied, FailedPrecondition (not a regular file), InvalidArgument
  // (unknown kind), other I/O errors. A zero-length file opens fine.
  // With `direct_io`, the file's reads bypass the page cache (O_DIRECT)
  // where its file system allows it; direct_io_refusal() says why not.
  static absl::StatusOr<std::shared_ptr<ChunkSource>> Open(
      const std::string& path, bool direct_io = false);

  ~ChunkSource();
  ChunkSource(const ChunkSource&) = delete;
  ChunkSource& operator=(const ChunkSource&) = delete;

  // A new, unindexed view of the same file that keeps only the chunks
  // `filter` accepts (on top of this source's own filter).
  std::shared_ptr<ChunkSource> WithFilter(ChunkFilter filter) const;
  // An indexed view of this indexed source that keeps only the chunks
  // `filter` accepts (on top of this source's own filter), made from this
  // source's index without reading the file again.
  std::shared_ptr<ChunkSource> IndexedView(ChunkFilter filter) const;

  // The file name: the sort key.
  const std::string& name() const;
  const std::string& path() const;
  // Why direct_io was asked for and the file is read buffered; else empty.
  const std::string& direct_io_refusal() const;
  Kind kind() const;
  uint64_t file_size() const;

  // Builds the chunk index: a tar's headers are read through `reader`
  // (sequential 512-byte reads), a `.gz` needs none. Call once, from the one
  // stage that owns the source, before size() / ReadChunk (not thread-safe
  // with them). Returns OK; or, for a damaged tar, the damage (the members
  // before it are kept, see io/tar_index.h); or an I/O error (no chunks).
  asio::awaitable<absl::Status> Index(io::AsyncFileReader& reader);

  // Chunks kept by Index() (0 before).
  size_t size() const { return locations_.size(); }
  // `.gz` members Index() passed over as macOS AppleDouble files (see
  // IsAppleDoubleMember); they are not chunks and take no chunk index.
  uint64_t apple_double_members() const { return apple_double_members_; }
  const ChunkLocation& location(size_t i) const { return locations_[i]; }

  // Reads chunk `i` (< size()). Thread-safe once indexed; many reads may be
  // in flight. Errors: NotFound / PermissionDenied (a loose file vanished or
  // changed mode), DataLoss (the file shrank), InvalidArgument (not gzip:
  // the magic bytes are checked here, not at index time, to keep indexing
  // to header reads), ResourceExhausted (larger than `max_bytes`), other I/O.
  asio::awaitable<absl::StatusOr<Chunk>> ReadChunk(io::AsyncFileReader& reader,
                                                   size_t i,
                                                   uint64_t max_bytes) const;

  // One chunk to read: chunk `index` (< size()) of the indexed `source`.
  struct Ref {
    const ChunkSource* source = nullptr;
    size_t index = 0;
  };
  // Reads the chunks `refs` name with one batch of reads (one resumption
  // for all of them in the common case); result i is for refs[i], with
  // ReadChunk's errors. The sources must outlive the call.
  static asio::awaitable<std::vector<absl::StatusOr<Chunk>>> ReadChunks(
      io::AsyncFileReader& reader, std::span<const Ref> refs,
      uint64_t max_bytes);

  struct File;  // the shared, open file

 private:
  ChunkSource(std::shared_ptr<const File> file, ChunkFilter filter);
  bool Keep(uint64_t index_in_source) const;

  std::shared_ptr<const File> file_;
  ChunkFilter filter_;  // empty: keep all
  std::vector<ChunkLocation> locations_;
  uint64_t apple_double_members_ = 0;
};

// Whether a tar member is macOS metadata, not data: an AppleDouble file
// (resource fork and attributes, base name `._*`, written by bsdtar beside
// every file) or anything under a `__MACOSX/` folder (Finder's zip-style
// copies).
bool IsAppleDoubleMember(std::string_view name);

// The snake_case skip reason for an Index() error: tar_bad_checksum,
// tar_member_past_eof, tar_truncated, tar_limit_exceeded, tar_malformed or
// read_error.
std::string_view IndexSkipReason(const absl::Status& error);
// The skip reason for a ReadChunk() error: file_missing, permission_denied,
// not_gzip, chunk_too_large, file_truncated or read_error.
std::string_view ReadSkipReason(const absl::Status& error);
// The skip reason for an io::Gunzip() error of a chunk: not_gzip,
// decompressed_too_large or corrupt_gzip.
std::string_view GunzipSkipReason(const absl::Status& error);
// Whether a ReadChunk() error is a failed read (the file vanished, shrank,
// or the read failed) rather than bytes read whole that are not a chunk
// (not gzip, over the size limit).
bool IsReadFailure(const absl::Status& error);

// ChunkSourceLoader's output: an unindexed source, or the end-of-scan
// marker (null source, phase kInitialScanComplete) passed on from discovery.
struct ChunkSourceItem {
  std::shared_ptr<ChunkSource> source;
  DiscoveryPhase phase = DiscoveryPhase::kNew;
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_CHUNK_H_
