// A tiny flag parser shared by the `sluice` subcommands.
//
//   SLUICE_ASSIGN_OR_RETURN(ParsedArgs args, ParseArgs(argv, {"games"}));
//   SLUICE_ASSIGN_OR_RETURN(int64_t games,
//                           IntFlag(args, "games", 1, 1, 1'000'000));
//
// Flags are `--name value` or `--name=value`; `--help` / `-h` need no
// value; everything else is positional. Errors are one-line statuses.
#ifndef SLUICE_BINDINGS_CLI_FLAGS_H_
#define SLUICE_BINDINGS_CLI_FLAGS_H_

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace sluice::cli {

// Exit statuses of every subcommand besides 0.
inline constexpr int kExitFailure = 1;  // the command ran and failed
inline constexpr int kExitUsage = 2;    // the command line was wrong

// Prints "sluice COMMAND: MESSAGE (see sluice COMMAND --help)" to `err` and
// returns kExitUsage.
int UsageError(std::ostream& err, absl::string_view command,
               absl::string_view message);

// The arguments of one subcommand, split into positionals and flags.
struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::string, std::less<>> flags;  // name -> value
  bool help = false;
};

// Parses `args` (the words after the subcommand). `known_flags` take a
// value; `switches` take none (present means on; stored with value "").
// Names are without dashes. Fails on an unknown or repeated flag, a flag
// without a value, or a switch given one.
absl::StatusOr<ParsedArgs> ParseArgs(
    const std::vector<std::string>& args,
    const std::vector<std::string>& known_flags,
    const std::vector<std::string>& switches = {});

// The value of integer flag `name`, or `fallback` when it is absent. Fails
// when the value is not a decimal integer in [min, max].
absl::StatusOr<int64_t> IntFlag(const ParsedArgs& args, std::string_view name,
                                int64_t fallback, int64_t min, int64_t max);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_FLAGS_H_
