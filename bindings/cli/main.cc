// The `sluice` command: one subcommand per file (`gen_command.cc`, ...),
// dispatched from the table below.
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "bindings/cli/bench_command.h"
#include "bindings/cli/demo_command.h"
#include "bindings/cli/gen_command.h"
#include "bindings/cli/rescore_command.h"
#include "bindings/cli/run_command.h"

namespace {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const std::vector<std::string>& args, std::ostream& out,
             std::ostream& err);
};

constexpr Command kCommands[] = {
    {"demo", sluice::cli::kDemoSummary, sluice::cli::RunDemoCommand},
    {"gen", sluice::cli::kGenSummary, sluice::cli::RunGenCommand},
    {"run", sluice::cli::kRunSummary, sluice::cli::RunRunCommand},
    {"bench", sluice::cli::kBenchSummary, sluice::cli::RunBenchCommand},
    {"rescore", sluice::cli::kRescoreSummary, sluice::cli::RunRescoreCommand},
};

void PrintUsage(std::ostream& out) {
  out << "usage: sluice COMMAND [ARGS...]   (sluice COMMAND --help)\n\n"
         "commands:\n";
  for (const Command& command : kCommands) {
    out << "  " << command.name << "  " << command.summary << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(std::cerr);
    return 2;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(std::cout);
    return 0;
  }
  for (const Command& command : kCommands) {
    if (command.name == name) {
      return command.run(std::vector<std::string>(argv + 2, argv + argc),
                         std::cout, std::cerr);
    }
  }
  std::cerr << "sluice: unknown command '" << name << "' (see sluice --help)\n";
  return 2;
}
