#include "engine/data_loader.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice {

void ThrowIfError(const absl::Status& status) {
  if (status.ok()) return;
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
      throw ConfigError(message);
    default:
      throw PipelineError(message);
  }
}

DataLoader::DataLoader(StageFactory factory) : pipeline_(std::move(factory)) {}

DataLoader::~DataLoader() { Stop(); }

void DataLoader::AddStage(std::string_view serialized_stage_config) {
  StageConfig config;
  if (!config.ParseFromArray(
          serialized_stage_config.data(),
          static_cast<int>(serialized_stage_config.size()))) {
    throw ConfigError("AddStage: the bytes are not a serialized StageConfig");
  }
  ThrowIfError(pipeline_.AddStage(config));
}

void DataLoader::AddStages(std::string_view serialized_data_loader_config) {
  DataLoaderConfig config;
  if (!config.ParseFromArray(
          serialized_data_loader_config.data(),
          static_cast<int>(serialized_data_loader_config.size()))) {
    throw ConfigError(
        "AddStages: the bytes are not a serialized DataLoaderConfig");
  }
  Configure(config);
}

void DataLoader::Configure(const DataLoaderConfig& config) {
  ThrowIfError(pipeline_.Configure(config));
}

void DataLoader::Start() { ThrowIfError(pipeline_.Start()); }

void DataLoader::Stop() { pipeline_.Stop(); }

std::string DataLoader::Checkpoint() {
  absl::StatusOr<LoaderCheckpoint> checkpoint = pipeline_.Checkpoint();
  if (!checkpoint.ok())
    throw ConfigError(std::string(checkpoint.status().message()));
  return SerializeCheckpoint(*std::move(checkpoint));
}

void DataLoader::Resume(std::string_view checkpoint) {
  absl::StatusOr<LoaderCheckpoint> parsed = ParseCheckpoint(checkpoint);
  if (!parsed.ok()) {
    throw ConfigError(absl::StrCat("resume: ", parsed.status().message()));
  }
  const absl::Status resumed = pipeline_.Resume(*parsed);
  if (!resumed.ok()) throw ConfigError(std::string(resumed.message()));
}

void DataLoader::Resume(const std::vector<std::string>& checkpoints) {
  std::vector<LoaderCheckpoint> parsed;
  parsed.reserve(checkpoints.size());
  for (size_t i = 0; i < checkpoints.size(); ++i) {
    absl::StatusOr<LoaderCheckpoint> one = ParseCheckpoint(checkpoints[i]);
    if (!one.ok()) {
      throw ConfigError(absl::StrCat("resume: checkpoint ", i + 1, " of ",
                                     checkpoints.size(), ": ",
                                     one.status().message()));
    }
    parsed.push_back(*std::move(one));
  }
  const absl::Status resumed = pipeline_.Resume(parsed);
  if (!resumed.ok()) throw ConfigError(std::string(resumed.message()));
}

std::vector<StageControlResponse> DataLoader::SendControlMessage(
    const StageControlRequest& request) {
  return pipeline_.SendControlMessage(request);
}

std::vector<std::string> DataLoader::SendControlMessage(
    std::string_view serialized_request) {
  StageControlRequest request;
  if (!request.ParseFromArray(serialized_request.data(),
                              static_cast<int>(serialized_request.size()))) {
    throw ConfigError(
        "SendControlMessage: the bytes are not a serialized "
        "StageControlRequest");
  }
  std::vector<std::string> serialized;
  for (const StageControlResponse& response : SendControlMessage(request)) {
    serialized.push_back(response.SerializeAsString());
  }
  return serialized;
}

}  // namespace sluice
