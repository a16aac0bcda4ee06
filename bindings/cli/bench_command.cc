#include "bindings/cli/bench_command.h"

#include "bindings/cli/bench_io.h"
#include "bindings/cli/bench_pipeline.h"

namespace sluice::cli {
namespace {

constexpr char kBenchUsage[] =
    "usage: sluice bench io PATH... [options]     read throughput\n"
    "       sluice bench pipeline [CONFIG] [options]  pipeline throughput\n"
    "(sluice bench io --help, sluice bench pipeline --help)\n";

}  // namespace

int RunBenchCommand(const std::vector<std::string>& args, std::ostream& out,
                    std::ostream& err) {
  if (args.empty()) {
    err << "sluice bench: expected io or pipeline (see sluice bench --help)\n";
    return 2;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "--help" || args[0] == "-h") {
    out << kBenchUsage;
    return 0;
  }
  if (args[0] == "io") return RunBenchIo(rest, out, err);
  if (args[0] == "pipeline") return RunBenchPipeline(rest, out, err);
  err << "sluice bench: unknown benchmark '" << args[0]
      << "' (expected io or pipeline)\n";
  return 2;
}

}  // namespace sluice::cli
