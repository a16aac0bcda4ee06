// PyDataLoader: the DataLoader (engine/data_loader.h) as the extension
// class `sluice._sluice.DataLoader`; the Python class sluice.DataLoader
// (sluice/_loader.py) wraps it and speaks protobuf messages, this one speaks
// serialized bytes.
//
//   loader = _sluice.DataLoader(config.SerializeToString())
//   loader.start()
//   batch = loader.get_next("")   # dict of arrays, an int, or None
//   loader.stop()
//
// Promises:
// - Every call that may block (start, stop, get_next, send_control_message,
//   the destructor) releases the GIL. get_next waits in slices of at most
//   kSignalPollInterval and runs Python's signal handlers between slices,
//   so Ctrl-C raises KeyboardInterrupt within about that long.
// - Destroying a loader that was never stopped stops it (threads joined).
// - Errors: ConfigError (-> sluice.ConfigError, a ValueError) for a bad
//   config or an unknown output; PipelineError (-> sluice.PipelineError, a
//   RuntimeError) when a stage failed, with its message; RuntimeError for
//   get_next before start; TypeError for an output whose element type has
//   no Python form.
#ifndef SLUICE_BINDINGS_PYTHON_PY_DATA_LOADER_H_
#define SLUICE_BINDINGS_PYTHON_PY_DATA_LOADER_H_

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "engine/data_loader.h"
#include "pybind11/pybind11.h"

namespace sluice::python {

// The longest get_next waits before it checks for signals.
inline constexpr std::chrono::milliseconds kSignalPollInterval{50};

class PyDataLoader {
 public:
  // Configures a loader from a serialized DataLoaderConfig; throws
  // ConfigError for a bad config.
  explicit PyDataLoader(const std::string& serialized_config);
  // Stops the pipeline if it runs.
  ~PyDataLoader();
  PyDataLoader(const PyDataLoader&) = delete;
  PyDataLoader& operator=(const PyDataLoader&) = delete;

  // Starts the pipeline; a ConfigError if it was started before.
  void Start();
  // Stops the pipeline and joins its threads; idempotent. Items already
  // handed out (arrays) stay valid.
  void Stop();
  // The next item of output `alias` ("" is the first output): a dict of
  // tensor name to numpy array for TypedBatch outputs (BatchToArrays), an
  // int for uint64_t outputs;
  // None at end of stream or once stopped.
  pybind11::object GetNext(const std::string& alias);
  // Before start(): continue from checkpoint bytes (ConfigError if they
  // are damaged or from another config).
  void Resume(const std::string& checkpoint);
  // Before start(): continue from the checkpoints of every rank of a run,
  // on this loader's rank and world_size (another number of ranks is an
  // elastic resume); ConfigError as Resume, and when they are not every
  // rank's of one run.
  void ResumeAll(const std::vector<std::string>& checkpoints);
  // The checkpoint bytes of the running loader (ConfigError if it cannot
  // take one).
  pybind11::bytes Checkpoint();
  // The latest metrics snapshot, a serialized DataLoaderMetricsProto.
  pybind11::bytes Metrics();
  // A serialized StageControlRequest in, the serialized responses out.
  std::vector<pybind11::bytes> SendControlMessage(
      const std::string& serialized_request);
  // Writes the HTML run report (bindings/report/html_report.h) of the run
  // so far to `path`, titled `title`; OSError naming the path when it
  // cannot be written.
  void WriteReport(const std::string& path, const std::string& title);
  // Why the trace (DataLoaderConfig.trace) could not be written when the
  // loader stopped; "" when it was, or there is none.
  std::string TraceError();

 private:
  enum class State { kConfigured, kRunning, kStopped };

  // Waits for the next item of type T, in slices, checking signals.
  template <typename T>
  std::optional<T> Pull(const std::string& alias);

  DataLoaderConfig config_;
  DataLoader loader_;
  std::mutex control_mu_;  // serializes Start and Stop
  std::atomic<State> state_{State::kConfigured};
};

}  // namespace sluice::python

#endif  // SLUICE_BINDINGS_PYTHON_PY_DATA_LOADER_H_
