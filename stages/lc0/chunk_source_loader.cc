#include "stages/lc0/chunk_source_loader.h"

#include <string_view>
#include <utility>

#include "engine/log.h"
#include "engine/status_macros.h"

namespace sluice::lc0 {
namespace {

std::string_view OpenSkipReason(const absl::Status& error) {
  switch (error.code()) {
    case absl::StatusCode::kNotFound:
      return "file_missing";
    case absl::StatusCode::kPermissionDenied:
      return "permission_denied";
    case absl::StatusCode::kFailedPrecondition:
      return "not_regular_file";
    default:
      return "open_error";
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Stage>> ChunkSourceLoader::Create(
    const StageContext& context) {
  SLUICE_ASSIGN_OR_RETURN(Channel<DiscoveredFile> * input,
                          context.SingleInput<DiscoveredFile>());
  return std::unique_ptr<Stage>(new ChunkSourceLoader(context, input));
}

ChunkSourceLoader::ChunkSourceLoader(const StageContext& context,
                                     Channel<DiscoveredFile>* input)
    : Stage(context),
      direct_io_(context.config().chunk_source_loader().direct_io()),
      input_(input),
      output_(AddOutput<ChunkSourceItem>("output", 1024)) {}

void ChunkSourceLoader::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, 1, [this](int) { return Run(); });
}

asio::awaitable<void> ChunkSourceLoader::Run() {
  static RateLimiter limiter(absl::Seconds(5));
  while (std::optional<DiscoveredFile> file =
             co_await input_->Receive(load_meter())) {
    ChunkSourceItem item{nullptr, file->phase};
    if (file->phase != DiscoveryPhase::kInitialScanComplete) {
      if (!ChunkSource::KindOf(file->path)) {
        CountSkip("unknown_file_type");
        continue;
      }
      absl::StatusOr<std::shared_ptr<ChunkSource>> source =
          ChunkSource::Open(file->path, direct_io_);
      if (!source.ok()) {
        CountSkip(OpenSkipReason(source.status()));
        if (limiter.Allow()) {
          LogWarning("stage ", name(), ": skipping ", source.status());
        }
        continue;
      }
      if ((*source)->file_size() == 0) {
        CountSkip("zero_length");
        continue;
      }
      if (!(*source)->direct_io_refusal().empty()) {
        direct_io_refused_.fetch_add(1);
        if (limiter.Allow()) {
          LogWarning("stage ", name(), ": O_DIRECT refused for ", file->path,
                     " (", (*source)->direct_io_refusal(),
                     "); reading it through the page cache");
        }
      }
      ((*source)->kind() == ChunkSource::Kind::kTar ? tar_sources_
                                                    : gzip_sources_)
          .fetch_add(1);
      source_bytes_.fetch_add((*source)->file_size());
      item.source = *std::move(source);
    }
    if (!co_await output_->Send(std::move(item), load_meter())) co_return;
  }
}

void ChunkSourceLoader::AddMetrics(StageMetricProto& metrics) {
  ChunkSourceLoaderMetricsProto& out = *metrics.mutable_chunk_source_loader();
  out.set_tar_sources(tar_sources_.exchange(0));
  out.set_gzip_sources(gzip_sources_.exchange(0));
  out.set_source_bytes(source_bytes_.exchange(0));
  out.set_direct_io_refused(direct_io_refused_.exchange(0));
}

}  // namespace sluice::lc0
