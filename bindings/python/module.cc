// The extension module `sluice._sluice`: the loader class, the default lc0
// pipeline builder and the synthetic data generator, in terms of bytes and
// plain values. The public API is the Python package around it
// (sluice/__init__.py), which converts to and from protobuf messages.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings/python/py_data_loader.h"
#include "engine/data_loader.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "stages/lc0/default_pipeline.h"
#include "stages/lc0/format/data_generator.h"

namespace sluice::python {
namespace {

namespace py = pybind11;

// The serialized default lc0 pipeline with the given overrides (unset:
// the defaults of proto/examples/lc0_{train,eval}.textproto).
py::bytes Lc0Pipeline(
    std::vector<std::string> directories, const std::string& mode,
    std::optional<uint64_t> batch_size, std::optional<uint64_t> chunk_pool_size,
    std::optional<uint64_t> reservoir, std::optional<uint64_t> min_fill,
    std::optional<uint64_t> seed, std::optional<uint32_t> threads,
    std::optional<uint32_t> input_format) {
  lc0::PipelineMode pipeline_mode;
  if (mode == "train") {
    pipeline_mode = lc0::PipelineMode::kTrain;
  } else if (mode == "eval") {
    pipeline_mode = lc0::PipelineMode::kEval;
  } else {
    throw ConfigError(
        "lc0 pipeline: mode must be \"train\" or \"eval\", not \"" + mode +
        "\"");
  }
  const lc0::PipelineOptions options{.directories = std::move(directories),
                                     .mode = pipeline_mode,
                                     .batch_size = batch_size,
                                     .chunk_pool_size = chunk_pool_size,
                                     .reservoir_size = reservoir,
                                     .min_fill = min_fill,
                                     .seed = seed,
                                     .worker_threads = threads,
                                     .input_format = input_format};
  absl::StatusOr<DataLoaderConfig> config = lc0::MakePipeline(options);
  ThrowIfError(config.status());
  return py::bytes(config->SerializeAsString());
}

// Writes synthetic games (stages/lc0/format/data_generator.h) and returns
// {"paths": [...], "games": n, "positions": n}.
py::dict GenerateGames(const std::string& directory, int games, uint64_t seed,
                       int version, int input_format, bool tar,
                       int games_per_tar, int first_game) {
  const lc0::GeneratorOptions options{
      .seed = seed, .version = version, .input_format = input_format};
  const lc0::OutputOptions output{
      .mode = tar ? lc0::OutputMode::kTar : lc0::OutputMode::kLoose,
      .dir = directory,
      .games = games,
      .first_game = first_game,
      .games_per_tar = games_per_tar};
  absl::StatusOr<lc0::GeneratedFiles> files;
  {
    py::gil_scoped_release release;
    files = lc0::WriteGames(options, output);
  }
  ThrowIfError(files.status());
  py::dict result;
  result["paths"] = files->paths;
  result["games"] = files->games;
  result["positions"] = files->positions;
  return result;
}

}  // namespace
}  // namespace sluice::python

PYBIND11_MODULE(_sluice, m) {
  namespace py = pybind11;
  using sluice::ConfigError;
  using sluice::PipelineError;
  using namespace sluice::python;

  m.doc() = "sluice's C++ engine; use the `sluice` package, not this module.";
  py::register_exception<ConfigError>(m, "ConfigError", PyExc_ValueError);
  py::register_exception<PipelineError>(m, "PipelineError", PyExc_RuntimeError);

  py::class_<PyDataLoader>(m, "DataLoader",
                           "A pipeline built from a serialized "
                           "DataLoaderConfig (see py_data_loader.h).")
      .def(py::init<const std::string&>(), py::arg("serialized_config"))
      .def("start", &PyDataLoader::Start)
      .def("stop", &PyDataLoader::Stop)
      .def("get_next", &PyDataLoader::GetNext, py::arg("output") = "")
      .def("metrics", &PyDataLoader::Metrics)
      .def("send_control_message", &PyDataLoader::SendControlMessage,
           py::arg("serialized_request"));

  m.def("lc0_pipeline", &Lc0Pipeline, py::arg("directories"), py::arg("mode"),
        py::arg("batch_size"), py::arg("chunk_pool_size"), py::arg("reservoir"),
        py::arg("min_fill"), py::arg("seed"), py::arg("threads"),
        py::arg("input_format"),
        "The serialized default lc0 DataLoaderConfig with overrides.");
  m.def("generate_games", &GenerateGames, py::arg("directory"),
        py::arg("games"), py::arg("seed"), py::arg("version"),
        py::arg("input_format"), py::arg("tar"), py::arg("games_per_tar"),
        py::arg("first_game"),
        "Writes synthetic lc0 games; returns paths, games and positions.");
}
