// `sluice bench io PATH...`: read throughput of the given files or
// directories (see io_throughput.h), as a table or one JSON object.
#ifndef SLUICE_BINDINGS_CLI_BENCH_IO_H_
#define SLUICE_BINDINGS_CLI_BENCH_IO_H_

#include <ostream>
#include <string>
#include <vector>

namespace sluice::cli {

// Runs `sluice bench io` with the words after "io"; exit code as
// RunBenchCommand.
int RunBenchIo(const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_BENCH_IO_H_
