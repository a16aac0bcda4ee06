#include "bindings/cli/gen_command.h"

#include <cstdint>
#include <limits>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "bindings/cli/arrow_data.h"
#include "bindings/cli/audio_data.h"
#include "bindings/cli/flags.h"
#include "stages/lc0/format/data_generator.h"

namespace sluice::cli {
namespace {

constexpr char kGenUsage[] =
    "usage: sluice gen {loose|tar} DIR --games N [--format 1|3] "
    "[--version 3..6]\n"
    "                  [--seed S] [--games-per-tar K]\n"
    "\n"
    "Writes N synthetic lc0 games (60-250 positions each) into DIR, as loose\n"
    "training.<id>.gz chunks or as training-run1-test80-YYYYMMDD-HHMM.tar\n"
    "archives of K chunks each. The same seed writes the same bytes.\n"
    "\n"
    "  --games N          games to write (required)\n"
    "  --format F         input format 1 (classical, default) or 3\n"
    "  --version V        record version 3, 4, 5 or 6 (default 6)\n"
    "  --seed S           random seed (default 1)\n"
    "  --games-per-tar K  games per archive in tar mode (default 100)\n"
    "\n"
    "sluice gen arrow DIR --rows N ...: synthetic Arrow IPC files (see\n"
    "sluice gen arrow --help).\n"
    "sluice gen audio DIR --clips N ...: synthetic labelled audio clips in\n"
    "Arrow IPC files (see sluice gen audio --help).\n";

}  // namespace

int RunGenCommand(const std::vector<std::string>& args, std::ostream& out,
                  std::ostream& err) {
  if (!args.empty() && args[0] == "arrow") {
    return RunGenArrowCommand(args, out, err);
  }
  if (!args.empty() && args[0] == "audio") {
    return RunGenAudioCommand(args, out, err);
  }
  absl::StatusOr<ParsedArgs> parsed =
      ParseArgs(args, {"games", "format", "version", "seed", "games-per-tar"});
  if (!parsed.ok()) return UsageError(err, "gen", parsed.status().message());
  if (parsed->help) {
    out << kGenUsage;
    return 0;
  }
  if (parsed->positional.size() != 2 ||
      (parsed->positional[0] != "loose" && parsed->positional[0] != "tar")) {
    return UsageError(err, "gen", "expected {loose|tar} DIR");
  }
  if (!parsed->flags.contains("games")) {
    return UsageError(err, "gen", "--games is required");
  }
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  absl::StatusOr<int64_t> games = IntFlag(*parsed, "games", 0, 1, kIntMax);
  absl::StatusOr<int64_t> format = IntFlag(*parsed, "format", 1, 1, 3);
  absl::StatusOr<int64_t> version = IntFlag(*parsed, "version", 6, 3, 6);
  absl::StatusOr<int64_t> seed =
      IntFlag(*parsed, "seed", 1, 0, std::numeric_limits<int64_t>::max());
  absl::StatusOr<int64_t> per_tar =
      IntFlag(*parsed, "games-per-tar", 100, 1, kIntMax);
  for (const auto* value : {&games, &format, &version, &seed, &per_tar}) {
    if (!value->ok()) return UsageError(err, "gen", value->status().message());
  }
  const lc0::GeneratorOptions options{
      .seed = static_cast<uint64_t>(*seed),
      .version = static_cast<int>(*version),
      .input_format = static_cast<int>(*format)};
  if (absl::Status status = lc0::ValidateGeneratorOptions(options);
      !status.ok()) {
    return UsageError(err, "gen", status.message());
  }
  const lc0::OutputOptions output{.mode = parsed->positional[0] == "tar"
                                              ? lc0::OutputMode::kTar
                                              : lc0::OutputMode::kLoose,
                                  .dir = parsed->positional[1],
                                  .games = static_cast<int>(*games),
                                  .games_per_tar = static_cast<int>(*per_tar)};
  absl::StatusOr<lc0::GeneratedFiles> files = lc0::WriteGames(options, output);
  if (!files.ok()) {
    err << "sluice gen: " << files.status().message() << "\n";
    return kExitFailure;
  }
  constexpr size_t kListed = 10;
  for (size_t i = 0; i < files->paths.size() && i < kListed; ++i) {
    out << "wrote " << files->paths[i] << "\n";
  }
  if (files->paths.size() > kListed) {
    out << "... and " << files->paths.size() - kListed << " more\n";
  }
  out << absl::StrFormat(
      "%d files, %d games, %d positions (V%d, format %d)\n"
      "raw %d bytes, gzip %d bytes, ratio %.1fx; %d bytes on disk\n",
      files->paths.size(), files->games, files->positions, options.version,
      options.input_format, files->raw_bytes, files->compressed_bytes,
      static_cast<double>(files->raw_bytes) / files->compressed_bytes,
      files->file_bytes);
  return 0;
}

}  // namespace sluice::cli
