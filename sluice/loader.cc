#include "sluice/loader.h"

#include <utility>

#include "engine/config_text.h"
#include "engine/data_loader.h"
#include "engine/dtype.h"
#include "engine/typed_batch.h"
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

Batch Loader::ToBatch(const TypedBatch& batch) {
  std::vector<Tensor> tensors;
  tensors.reserve(batch.tensors().size());
  for (const BatchTensor& tensor : batch.tensors()) {
    tensors.push_back({.name = tensor.name,
                       .dtype = std::string(DTypeName(tensor.dtype)),
                       .data = tensor.data,
                       .shape = tensor.shape,
                       .bytes = tensor.bytes});
  }
  return Batch(batch.owner(), batch.size(), std::move(tensors));
}

std::optional<Batch> Loader::Next(std::string_view output) {
  std::optional<TypedBatch> batch = impl_->GetNext<TypedBatch>(output);
  if (!batch.has_value()) return std::nullopt;
  return ToBatch(*batch);
}

NextResult Loader::NextFor(std::chrono::nanoseconds timeout,
                           std::string_view output) {
  Channel<TypedBatch>::GetResult result =
      impl_->GetNextFor<TypedBatch>(output, timeout);
  switch (result.kind) {
    case Channel<TypedBatch>::GetResult::Kind::kItem:
      return {.batch = ToBatch(*result.item)};
    case Channel<TypedBatch>::GetResult::Kind::kTimeout:
      return {.timed_out = true};
    case Channel<TypedBatch>::GetResult::Kind::kEndOfStream:
      break;
  }
  return {};
}

std::string Loader::Checkpoint() { return impl_->Checkpoint(); }

void Loader::ResumeFrom(std::string_view checkpoint) {
  impl_->Resume(checkpoint);
}

void Loader::ResumeFrom(const std::vector<std::string>& checkpoints) {
  impl_->Resume(checkpoints);
}

DataLoaderMetricsProto Loader::Metrics() { return impl_->GetMetrics(); }

std::vector<StageControlResponse> Loader::SendControlMessage(
    const StageControlRequest& request) {
  return impl_->SendControlMessage(request);
}

}  // namespace sluice
