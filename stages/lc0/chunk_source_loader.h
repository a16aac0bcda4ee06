// ChunkSourceLoader: turns discovered paths into chunk sources. Input: one
// channel of lc0::DiscoveredFile; output "output" of lc0::ChunkSourceItem.
//
// Each path is opened (open + fstat, no reads; see ChunkSource::Open): a
// `*.tar` archive or a loose `*.gz` chunk becomes an unindexed ChunkSource,
// sent on with its discovery phase; the end-of-scan marker is passed on.
// Indexing (tar headers) is left to the pool, which indexes the newest
// sources first and never touches those older than its window.
//
// Skipped and counted (`skipped` metrics), the stage going on:
// unknown_file_type (neither .tar nor .gz), zero_length, file_missing (gone
// between discovery and loading), permission_denied, not_regular_file,
// open_error. Damage inside a tar, and chunks that are not gzip, are found
// and counted where the bytes are read: by the pool (see chunk.h).
//
// With `direct_io` (ChunkSourceLoaderConfig), the sources are opened so
// that their reads bypass the page cache (O_DIRECT); a source whose file
// system refuses it is read buffered, counted (`direct_io_refused`) and
// logged at a limited rate.
#ifndef SLUICE_STAGES_LC0_CHUNK_SOURCE_LOADER_H_
#define SLUICE_STAGES_LC0_CHUNK_SOURCE_LOADER_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/stage.h"
#include "stages/lc0/chunk.h"

namespace sluice::lc0 {

class ChunkSourceLoader final : public Stage {
 public:
  // Needs exactly one input of DiscoveredFile.
  static absl::StatusOr<std::unique_ptr<Stage>> Create(
      const StageContext& context);

  void Start(const StageRuntime& runtime) override;

 protected:
  void AddMetrics(StageMetricProto& metrics) override;

 private:
  ChunkSourceLoader(const StageContext& context,
                    Channel<DiscoveredFile>* input);
  asio::awaitable<void> Run();

  const bool direct_io_;
  Channel<DiscoveredFile>* const input_;
  Channel<ChunkSourceItem>* const output_;
  std::atomic<uint64_t> tar_sources_{0};
  std::atomic<uint64_t> gzip_sources_{0};
  std::atomic<uint64_t> source_bytes_{0};
  std::atomic<uint64_t> direct_io_refused_{0};
};

}  // namespace sluice::lc0

#endif  // SLUICE_STAGES_LC0_CHUNK_SOURCE_LOADER_H_
