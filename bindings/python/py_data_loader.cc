#include "bindings/python/py_data_loader.h"

#include <optional>
#include <stdexcept>
#include <typeindex>
#include <utility>

#include "bindings/python/batch_conversion.h"
#include "bindings/report/html_report.h"
#include "engine/typed_batch.h"
#include "io/atomic_file.h"
#include "stages/stage_factory.h"

namespace sluice::python {

namespace py = pybind11;

PyDataLoader::PyDataLoader(const std::string& serialized_config)
    : loader_(CreateStage) {
  loader_.AddStages(serialized_config);
  config_.ParseFromString(serialized_config);
}

PyDataLoader::~PyDataLoader() { Stop(); }

void PyDataLoader::Start() {
  py::gil_scoped_release release;
  std::lock_guard lock(control_mu_);
  if (state_ != State::kConfigured) {
    throw std::runtime_error("the loader was already started");
  }
  loader_.Start();
  state_ = State::kRunning;
}

void PyDataLoader::Stop() {
  py::gil_scoped_release release;
  std::lock_guard lock(control_mu_);
  loader_.Stop();
  state_ = State::kStopped;
}

void PyDataLoader::Resume(const std::string& checkpoint) {
  std::lock_guard lock(control_mu_);
  if (state_ != State::kConfigured) {
    throw std::runtime_error("resume: the loader was already started");
  }
  loader_.Resume(checkpoint);
}

void PyDataLoader::ResumeAll(const std::vector<std::string>& checkpoints) {
  std::lock_guard lock(control_mu_);
  if (state_ != State::kConfigured) {
    throw std::runtime_error("resume: the loader was already started");
  }
  loader_.Resume(checkpoints);
}

py::bytes PyDataLoader::Checkpoint() {
  std::string bytes;
  {
    py::gil_scoped_release release;
    bytes = loader_.Checkpoint();
  }
  return py::bytes(bytes);
}

template <typename T>
std::optional<T> PyDataLoader::Pull(const std::string& alias) {
  while (true) {
    std::optional<typename Channel<T>::GetResult> result;
    {
      py::gil_scoped_release release;
      result = loader_.GetNextFor<T>(alias, kSignalPollInterval);
    }
    if (result->kind != Channel<T>::GetResult::Kind::kTimeout) {
      return std::move(result->item);
    }
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
}

py::object PyDataLoader::GetNext(const std::string& alias) {
  switch (state_.load()) {
    case State::kConfigured:
      throw std::runtime_error("get_next: start() the loader first");
    case State::kStopped:
      return py::none();
    case State::kRunning:
      break;
  }
  absl::StatusOr<ChannelBase*> output = loader_.pipeline().FindOutput(alias);
  ThrowIfError(output.status());
  const std::type_index type = (*output)->element_type();
  if (type == typeid(TypedBatch)) {
    std::optional<TypedBatch> batch = Pull<TypedBatch>(alias);
    if (!batch.has_value()) return py::none();
    return BatchToArrays(std::move(*batch));
  }
  if (type == typeid(uint64_t)) {
    std::optional<uint64_t> item = Pull<uint64_t>(alias);
    if (!item.has_value()) return py::none();
    return py::int_(*item);
  }
  throw py::type_error(
      "get_next: output '" + alias + "' carries " +
      std::string((*output)->element_type_name()) +
      ", which has no Python form (Python reads TypedBatch and uint64_t "
      "outputs)");
}

py::bytes PyDataLoader::Metrics() {
  std::string serialized;
  {
    py::gil_scoped_release release;
    serialized = loader_.GetMetrics().SerializeAsString();
  }
  return py::bytes(serialized);
}

std::vector<py::bytes> PyDataLoader::SendControlMessage(
    const std::string& serialized_request) {
  std::vector<std::string> responses;
  {
    py::gil_scoped_release release;
    responses =
        loader_.SendControlMessage(std::string_view(serialized_request));
  }
  return std::vector<py::bytes>(responses.begin(), responses.end());
}

void PyDataLoader::WriteReport(const std::string& path,
                               const std::string& title) {
  absl::Status status;
  {
    py::gil_scoped_release release;
    status = CheckFileWritable(path);
    if (status.ok()) {
      status =
          report::WriteRunReport({.title = title,
                                  .config = config_,
                                  .metrics = loader_.GetMetrics(),
                                  .history = loader_.pipeline().GetHistory()},
                                 path);
    }
  }
  if (!status.ok()) {
    PyErr_SetString(PyExc_OSError,
                    ("write_report: " + std::string(status.message())).c_str());
    throw py::error_already_set();
  }
}

std::string PyDataLoader::TraceError() {
  return std::string(loader_.pipeline().trace_status().message());
}

}  // namespace sluice::python
