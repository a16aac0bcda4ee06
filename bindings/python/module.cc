// The extension module `sluice._sluice`: the loader class, the default lc0
// and audio pipeline builders and the synthetic data generators, in terms
// of bytes and plain values. The public API is the Python package around it
// (sluice/__init__.py), which converts to and from protobuf messages.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings/cli/audio_data.h"
#include "bindings/cli/synthetic_audio.h"
#include "bindings/python/audio_functions.h"
#include "bindings/python/py_data_loader.h"
#include "engine/data_loader.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "stages/audio/default_pipeline.h"
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
    std::optional<uint32_t> input_format, std::optional<uint32_t> rank,
    std::optional<uint32_t> world_size, std::optional<bool> deterministic) {
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
                                     .input_format = input_format,
                                     .rank = rank,
                                     .world_size = world_size,
                                     .deterministic = deterministic};
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

// The serialized default audio pipeline (stages/audio/default_pipeline.h)
// with the given overrides (unset: the defaults of
// proto/examples/audio_{train,eval}.textproto).
py::bytes AudioPipeline(
    std::vector<std::string> directories, const std::string& mode,
    std::optional<uint32_t> sample_rate, std::optional<double> clip_seconds,
    std::optional<uint32_t> n_fft, std::optional<uint32_t> hop_length,
    std::optional<uint32_t> n_mels, std::optional<uint32_t> batch_size,
    std::optional<uint64_t> shuffle_buffer, std::optional<uint64_t> min_fill,
    std::optional<uint64_t> seed, std::optional<uint32_t> threads,
    std::optional<std::string> audio_column,
    std::optional<std::string> label_column, std::optional<uint32_t> rank,
    std::optional<uint32_t> world_size, std::optional<bool> deterministic) {
  audio::PipelineMode pipeline_mode;
  if (mode == "train") {
    pipeline_mode = audio::PipelineMode::kTrain;
  } else if (mode == "eval") {
    pipeline_mode = audio::PipelineMode::kEval;
  } else {
    throw ConfigError(
        "audio pipeline: mode must be \"train\" or \"eval\", not \"" + mode +
        "\"");
  }
  const audio::PipelineOptions options{.directories = std::move(directories),
                                       .mode = pipeline_mode,
                                       .sample_rate = sample_rate,
                                       .clip_seconds = clip_seconds,
                                       .n_fft = n_fft,
                                       .hop_length = hop_length,
                                       .n_mels = n_mels,
                                       .batch_size = batch_size,
                                       .shuffle_buffer = shuffle_buffer,
                                       .min_fill = min_fill,
                                       .seed = seed,
                                       .worker_threads = threads,
                                       .audio_column = std::move(audio_column),
                                       .label_column = std::move(label_column),
                                       .rank = rank,
                                       .world_size = world_size,
                                       .deterministic = deterministic};
  absl::StatusOr<DataLoaderConfig> config = audio::MakePipeline(options);
  ThrowIfError(config.status());
  return py::bytes(config->SerializeAsString());
}

// Writes synthetic labelled clips in Arrow files (bindings/cli/audio_data.h)
// and returns {"paths": [...], "clips": n, "labels": [...],
// "durations": [...] (seconds; None for a damaged row), "corrupt": {row:
// kind}, "audio_seconds": s}, with `with_clips` also "clip_bytes": the
// encoded clip of each row (None for a damaged row).
py::dict GenerateAudio(const std::string& directory, int64_t clips,
                       int64_t classes, int64_t files, int64_t rows_per_batch,
                       uint64_t seed, int64_t corrupt_every,
                       bool hf_audio_struct, bool with_clips) {
  const cli::AudioDatasetOptions options{.dir = directory,
                                         .clips = clips,
                                         .classes = classes,
                                         .files = files,
                                         .rows_per_batch = rows_per_batch,
                                         .seed = seed,
                                         .corrupt_every = corrupt_every,
                                         .hf_audio_struct = hf_audio_struct};
  absl::StatusOr<cli::AudioDataset> written;
  {
    py::gil_scoped_release release;
    written = cli::WriteAudioDataset(options);
  }
  ThrowIfError(written.status());
  const std::map<int64_t, cli::CorruptKind> corrupt = cli::CorruptRows(options);
  py::dict result;
  py::list labels, durations;
  for (int64_t row = 0; row < clips; ++row) {
    const cli::ClipSpec spec = cli::DrawClipSpec(seed, row, classes);
    labels.append(spec.label);
    if (corrupt.contains(row)) {
      durations.append(py::none());
    } else {
      durations.append(spec.seconds());
    }
  }
  if (with_clips) {
    std::vector<std::optional<std::vector<std::byte>>> encoded(clips);
    absl::Status status;
    {
      py::gil_scoped_release release;
      for (int64_t row = 0; row < clips && status.ok(); ++row) {
        if (corrupt.contains(row)) continue;
        const cli::ClipSpec spec = cli::DrawClipSpec(seed, row, classes);
        absl::StatusOr<std::vector<std::byte>> clip =
            cli::EncodeClip(spec, cli::SynthesizeClip(spec));
        if (clip.ok()) {
          encoded[row] = *std::move(clip);
        } else {
          status = clip.status();
        }
      }
    }
    ThrowIfError(status);
    py::list clip_bytes;
    for (const auto& clip : encoded) {
      if (clip) {
        clip_bytes.append(py::bytes(reinterpret_cast<const char*>(clip->data()),
                                    clip->size()));
      } else {
        clip_bytes.append(py::none());
      }
    }
    result["clip_bytes"] = clip_bytes;
  }
  py::dict corrupt_rows;
  for (const auto& [row, kind] : corrupt) {
    corrupt_rows[py::int_(row)] = std::string(cli::CorruptKindName(kind));
  }
  result["paths"] = written->paths;
  result["clips"] = written->clips;
  result["labels"] = labels;
  result["durations"] = durations;
  result["corrupt"] = corrupt_rows;
  result["audio_seconds"] = written->audio_seconds;
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
      .def("resume", &PyDataLoader::Resume, py::arg("checkpoint"))
      .def("resume_all", &PyDataLoader::ResumeAll, py::arg("checkpoints"))
      .def("checkpoint", &PyDataLoader::Checkpoint)
      .def("send_control_message", &PyDataLoader::SendControlMessage,
           py::arg("serialized_request"))
      .def("write_report", &PyDataLoader::WriteReport, py::arg("path"),
           py::arg("title"))
      .def("trace_error", &PyDataLoader::TraceError);

  m.def("lc0_pipeline", &Lc0Pipeline, py::arg("directories"), py::arg("mode"),
        py::arg("batch_size"), py::arg("chunk_pool_size"), py::arg("reservoir"),
        py::arg("min_fill"), py::arg("seed"), py::arg("threads"),
        py::arg("input_format"), py::arg("rank"), py::arg("world_size"),
        py::arg("deterministic"),
        "The serialized default lc0 DataLoaderConfig with overrides.");
  m.def("generate_games", &GenerateGames, py::arg("directory"),
        py::arg("games"), py::arg("seed"), py::arg("version"),
        py::arg("input_format"), py::arg("tar"), py::arg("games_per_tar"),
        py::arg("first_game"),
        "Writes synthetic lc0 games; returns paths, games and positions.");
  m.def("audio_pipeline", &AudioPipeline, py::arg("directories"),
        py::arg("mode"), py::arg("sample_rate"), py::arg("clip_seconds"),
        py::arg("n_fft"), py::arg("hop_length"), py::arg("n_mels"),
        py::arg("batch_size"), py::arg("shuffle_buffer"), py::arg("min_fill"),
        py::arg("seed"), py::arg("threads"), py::arg("audio_column"),
        py::arg("label_column"), py::arg("rank"), py::arg("world_size"),
        py::arg("deterministic"),
        "The serialized default audio DataLoaderConfig with overrides.");
  m.def("generate_audio", &GenerateAudio, py::arg("directory"),
        py::arg("clips"), py::arg("classes"), py::arg("files"),
        py::arg("rows_per_batch"), py::arg("seed"), py::arg("corrupt_every"),
        py::arg("hf_audio_struct"), py::arg("with_clips"),
        "Writes synthetic labelled clips in Arrow files; returns paths, "
        "labels, durations and the damaged rows.");
  RegisterAudioCodecFunctions(m);
  RegisterAudioDspFunctions(m);
}
