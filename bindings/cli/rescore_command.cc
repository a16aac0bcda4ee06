#include "bindings/cli/rescore_command.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "bindings/cli/flags.h"
#include "io/atomic_file.h"
#include "io/gzip.h"
#include "stages/lc0/chess/syzygy_tablebase.h"
#include "stages/lc0/chunk_rescorer.h"
#include "stages/lc0/format/data_generator.h"
#include "stages/lc0/rescorer/game_rescorer.h"

namespace sluice::cli {
namespace {

constexpr char kRescoreUsage[] =
    "usage: sluice rescore IN_DIR OUT_DIR --syzygy-paths P[:P...]\n"
    "           [--deblunder-threshold T [--deblunder-width W]]\n"
    "           [--dtz-policy-boost B] [--temperature X] [--dist-offset O]\n"
    "           [--new-input-format F] [--output-version 6|7] [--threads N]\n"
    "\n"
    "Rescores every .gz chunk of IN_DIR (not recursive) as Leela Chess Zero's\n"
    "rescorer does and writes it to OUT_DIR under the same name, gzip'ed.\n"
    "Inputs are never deleted. A game lc0 would refuse is reported and not\n"
    "written; the run goes on.\n"
    "\n"
    "  --syzygy-paths P        directories of Syzygy *.rtbw/*.rtbz tables,\n"
    "                          ':'-separated (required)\n"
    "  --deblunder-threshold T deblunder: best_q - played_q above T - W/2 is\n"
    "                          a blunder (lc0 --deblunder with\n"
    "                          --deblunder-q-blunder-threshold); [0, 2]\n"
    "  --deblunder-width W     the blend zone around T (default 0); [0, 2]\n"
    "  --dtz-policy-boost B    policy mass for the winning moves of minimal\n"
    "                          DTZ (default 0); [0, 1]\n"
    "  --temperature X         policy temperature (default 1); [0.001, 100]\n"
    "  --dist-offset O         added to legal policy entries (default 0);\n"
    "                          [-0.999, 0]\n"
    "  --new-input-format F    re-encode the planes in format 1 or 3\n"
    "  --output-version V      6 (lc0's program, default) or 7\n"
    "                          (lczero-training's V7 records)\n"
    "  --threads N             files rescored at once (default: one per "
    "core)\n";

absl::StatusOr<float> FloatFlag(const ParsedArgs& args, std::string_view name,
                                float fallback) {
  const auto it = args.flags.find(name);
  if (it == args.flags.end()) return fallback;
  float value;
  if (!absl::SimpleAtof(it->second, &value)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s: '%s' is not a number", std::string(name), it->second));
  }
  return value;
}

// What the whole run did.
struct Totals {
  std::mutex mu;
  lc0::rescorer::RescoreCounts counts;
  std::map<std::string, uint64_t> refused;
  uint64_t written = 0;
};

}  // namespace

int RunRescoreCommand(const std::vector<std::string>& args, std::ostream& out,
                      std::ostream& err) {
  absl::StatusOr<ParsedArgs> parsed =
      ParseArgs(args, {"syzygy-paths", "deblunder-threshold", "deblunder-width",
                       "dtz-policy-boost", "temperature", "dist-offset",
                       "new-input-format", "output-version", "threads"});
  if (!parsed.ok())
    return UsageError(err, "rescore", parsed.status().message());
  if (parsed->help) {
    out << kRescoreUsage;
    return 0;
  }
  if (parsed->positional.size() != 2) {
    return UsageError(err, "rescore", "expected IN_DIR OUT_DIR");
  }
  if (!parsed->flags.contains("syzygy-paths")) {
    return UsageError(err, "rescore", "--syzygy-paths is required");
  }
  ChunkRescorerConfig config;
  for (const absl::string_view path : absl::StrSplit(
           parsed->flags.at("syzygy-paths"), ':', absl::SkipEmpty())) {
    config.add_syzygy_paths(std::string(path));
  }
  absl::StatusOr<float> threshold =
      FloatFlag(*parsed, "deblunder-threshold", 2);
  absl::StatusOr<float> width = FloatFlag(*parsed, "deblunder-width", 0);
  absl::StatusOr<float> boost = FloatFlag(*parsed, "dtz-policy-boost", 0);
  absl::StatusOr<float> temperature = FloatFlag(*parsed, "temperature", 1);
  absl::StatusOr<float> offset = FloatFlag(*parsed, "dist-offset", 0);
  for (const auto* value :
       {&threshold, &width, &boost, &temperature, &offset}) {
    if (!value->ok())
      return UsageError(err, "rescore", value->status().message());
  }
  absl::StatusOr<int64_t> format =
      IntFlag(*parsed, "new-input-format", -1, -1, 256);
  absl::StatusOr<int64_t> version = IntFlag(*parsed, "output-version", 6, 6, 7);
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  absl::StatusOr<int64_t> threads = IntFlag(*parsed, "threads", cores, 1, 256);
  for (const auto* value : {&format, &version, &threads}) {
    if (!value->ok())
      return UsageError(err, "rescore", value->status().message());
  }
  if (parsed->flags.contains("deblunder-threshold")) {
    config.mutable_deblunder()->set_threshold(*threshold);
    config.mutable_deblunder()->set_width(*width);
  } else if (parsed->flags.contains("deblunder-width")) {
    return UsageError(err, "rescore",
                      "--deblunder-width needs --deblunder-threshold");
  }
  config.set_dtz_policy_boost(*boost);
  config.set_temperature(*temperature);
  config.set_dist_offset(*offset);
  config.set_new_input_format(static_cast<int32_t>(*format));
  config.set_output_version(static_cast<uint32_t>(*version));
  absl::StatusOr<lc0::rescorer::RescoreOptions> options =
      lc0::RescoreOptionsOf(config);
  if (!options.ok())
    return UsageError(err, "rescore", options.status().message());

  const std::filesystem::path in_dir = parsed->positional[0];
  const std::filesystem::path out_dir = parsed->positional[1];
  std::error_code ec;
  if (!std::filesystem::is_directory(in_dir, ec)) {
    err << "sluice rescore: " << in_dir << " is not a directory\n";
    return kExitFailure;
  }
  std::filesystem::create_directories(out_dir, ec);
  if (ec || std::filesystem::equivalent(in_dir, out_dir, ec)) {
    err << "sluice rescore: cannot write to " << out_dir
        << (ec ? ": " + ec.message() : " (the input directory)") << "\n";
    return kExitFailure;
  }
  auto tables = lc0::chess::SyzygyTablebase::Load(
      {config.syzygy_paths().begin(), config.syzygy_paths().end()});
  if (!tables.ok()) {
    err << "sluice rescore: " << tables.status().message() << "\n";
    return kExitFailure;
  }
  out << absl::StrFormat("tables: %d WDL and %d DTZ files, up to %d pieces\n",
                         (*tables)->wdl_tables(), (*tables)->dtz_tables(),
                         (*tables)->max_cardinality());
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(in_dir, ec)) {
    if (!entry.is_regular_file()) continue;
    if (entry.path().extension() != ".gz") {
      err << "Skipping " << entry.path().filename().string()
          << " (not a .gz file)\n";
      continue;
    }
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  const lc0::rescorer::GameRescorer rescorer(*tables, *options);
  Totals totals;
  std::atomic<size_t> next{0};
  auto work = [&] {
    std::string rescored;
    for (size_t i = next++; i < files.size(); i = next++) {
      const std::string name = files[i].filename().string();
      auto report = [&](absl::string_view reason, absl::string_view detail) {
        std::lock_guard lock(totals.mu);
        ++totals.refused[std::string(reason)];
        err << "While processing: " << files[i].string() << " - " << reason
            << ": " << detail << "\n";
      };
      absl::StatusOr<std::string> compressed = ReadWholeFile(files[i]);
      if (!compressed.ok()) {
        report("read_error", compressed.status().message());
        continue;
      }
      absl::StatusOr<std::string> records =
          io::Gunzip(*compressed, uint64_t{1} << 30);
      if (!records.ok()) {
        report("corrupt_gzip", records.status().message());
        continue;
      }
      rescored.clear();
      lc0::rescorer::RescoreCounts counts;
      if (const auto rejection =
              rescorer.Rescore(*records, &rescored, &counts)) {
        report(absl::string_view(rejection->reason.data(),
                                 rejection->reason.size()),
               rejection->detail);
        continue;
      }
      absl::StatusOr<std::string> gzip = lc0::GzipChunk(rescored);
      absl::Status written =
          gzip.ok() ? WriteFileAtomically(out_dir.string(), name, *gzip)
                    : gzip.status();
      if (!written.ok()) {
        report("write_error", written.message());
        continue;
      }
      std::lock_guard lock(totals.mu);
      totals.counts += counts;
      ++totals.written;
    }
  };
  std::vector<std::thread> workers;
  for (int64_t t = 0; t < std::min<int64_t>(*threads, files.size()); ++t) {
    workers.emplace_back(work);
  }
  for (std::thread& worker : workers) worker.join();
  const lc0::rescorer::RescoreCounts& c = totals.counts;
  out << absl::StrFormat(
      "files: %d read, %d written\n"
      "games %d, positions %d, probed %d, results changed %d, DTZ decisions "
      "%d, blunders %d, boosted policy entries %d, records dropped %d\n",
      files.size(), totals.written, c.games, c.positions, c.positions_probed,
      c.results_changed, c.dtz_decisions, c.blunders, c.boosted_entries,
      c.records_dropped);
  for (const auto& [reason, count] : totals.refused) {
    out << absl::StrFormat("refused: %s %d\n", reason, count);
  }
  return 0;
}

}  // namespace sluice::cli
