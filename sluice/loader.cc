#include "sluice/loader.h"

#include <utility>

#include "engine/config_text.h"
#include "engine/data_loader.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/stage_factory.h"

namespace sluice {

Loader::Loader(const DataLoaderConfig& config)
    : impl_(std::make_unique<DataLoader>(CreateStage)) {
  impl_->Configure(config);
}

Loader Loader::FromConfigFile(const std::string& path) {
  absl::StatusOr<DataLoaderConfig> config = ReadConfigFile(path);
  if (!config.ok()) throw ConfigError(std::string(config.status().message()));
  return Loader(*config);
}

Loader Loader::FromText(std::string_view text) {
  absl::StatusOr<DataLoaderConfig> config =
      ParseConfigText(text, "text-format DataLoaderConfig");
  if (!config.ok()) throw ConfigError(std::string(config.status().message()));
  return Loader(*config);
}

Loader Loader::FromSerialized(std::string_view bytes) {
  DataLoaderConfig config;
  if (!config.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    throw ConfigError("the bytes are not a serialized DataLoaderConfig");
  }
  return Loader(config);
}

Loader::Loader(Loader&& other) noexcept = default;
Loader& Loader::operator=(Loader&& other) noexcept = default;
Loader::~Loader() = default;

void Loader::Start() { impl_->Start(); }

void Loader::Stop() { impl_->Stop(); }

std::optional<Batch> Loader::Next(std::string_view output) {
  std::optional<lc0::TensorBatch> batch =
      impl_->GetNext<lc0::TensorBatch>(output);
  if (!batch.has_value()) return std::nullopt;
  const size_t size = batch->size();
  std::vector<Tensor> tensors;
  for (lc0::TensorId id :
       {lc0::TensorId::kPlanes, lc0::TensorId::kProbs, lc0::TensorId::kWinner,
        lc0::TensorId::kBestQ, lc0::TensorId::kPliesLeft}) {
    const lc0::TensorView view = batch->view(id);
    tensors.push_back({std::string(view.name), "float32", view.data,
                       std::vector<int64_t>(view.shape.begin(),
                                            view.shape.begin() + view.rank),
                       view.bytes});
  }
  std::shared_ptr<void> buffer = std::move(*batch).ReleaseOwnership();
  return Batch(std::move(buffer), size, std::move(tensors));
}

DataLoaderMetricsProto Loader::Metrics() { return impl_->GetMetrics(); }

std::vector<StageControlResponse> Loader::SendControlMessage(
    const StageControlRequest& request) {
  return impl_->SendControlMessage(request);
}

}  // namespace sluice
