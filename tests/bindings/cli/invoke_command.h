// Runs a `sluice` subcommand in process, as main() would, and keeps what it
// printed: the tests of bindings/cli/ check exit codes and messages.
#ifndef SLUICE_TESTS_BINDINGS_CLI_INVOKE_COMMAND_H_
#define SLUICE_TESTS_BINDINGS_CLI_INVOKE_COMMAND_H_

#include <sstream>
#include <string>
#include <vector>

namespace sluice::cli {

// A subcommand's exit code and its standard output and error.
struct Result {
  int code;
  std::string out;
  std::string err;
};

// Calls `command(args, out, err)` (RunRunCommand, RunDemoCommand...).
template <typename Command>
Result Invoke(Command command, const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = command(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace sluice::cli

#endif  // SLUICE_TESTS_BINDINGS_CLI_INVOKE_COMMAND_H_
