#include "bindings/cli/flags.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace sluice::cli {

absl::StatusOr<ParsedArgs> ParseArgs(
    const std::vector<std::string>& args,
    const std::vector<std::string>& known_flags,
    const std::vector<std::string>& switches) {
  ParsedArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      parsed.help = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      parsed.positional.push_back(arg);
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", arg));
    }
    const size_t eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? eq : eq - 2);
    const bool is_switch =
        std::find(switches.begin(), switches.end(), name) != switches.end();
    if (!is_switch && std::find(known_flags.begin(), known_flags.end(), name) ==
                          known_flags.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
    std::string value;
    if (is_switch) {
      if (eq != std::string::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", name, " takes no value"));
      }
    } else if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", name, " needs a value"));
    }
    if (!parsed.flags.emplace(name, value).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", name, " given twice"));
    }
  }
  return parsed;
}

absl::StatusOr<int64_t> IntFlag(const ParsedArgs& args, std::string_view name,
                                int64_t fallback, int64_t min, int64_t max) {
  auto it = args.flags.find(name);
  if (it == args.flags.end()) return fallback;
  int64_t value = 0;
  if (!absl::SimpleAtoi(it->second, &value) || value < min || value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad value '", it->second, "' for --", std::string(name),
                     ": expected an integer in [", min, ", ", max, "]"));
  }
  return value;
}

int UsageError(std::ostream& err, absl::string_view command,
               absl::string_view message) {
  err << "sluice " << command << ": " << message << " (see sluice " << command
      << " --help)\n";
  return kExitUsage;
}

}  // namespace sluice::cli
