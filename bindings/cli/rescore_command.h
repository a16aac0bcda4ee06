// `sluice rescore IN_DIR OUT_DIR --syzygy-paths P ...`: lc0's rescorer on a
// directory of chunks, as a drop-in for lc0's `rescorer rescore`.
#ifndef SLUICE_BINDINGS_CLI_RESCORE_COMMAND_H_
#define SLUICE_BINDINGS_CLI_RESCORE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace sluice::cli {

inline constexpr char kRescoreSummary[] =
    "rescore lc0 chunks with Syzygy tablebases / deblunder, as lc0's "
    "rescorer";

// Rescores every *.gz file of IN_DIR (not recursive) into OUT_DIR under
// the same name, gzip'ed; never deletes or changes its inputs. A game lc0
// would refuse is reported on `err` and not written. Returns 0 when the
// run completed (refused games included), 1 on a failure to start (tables,
// directories), 2 on a usage error.
int RunRescoreCommand(const std::vector<std::string>& args, std::ostream& out,
                      std::ostream& err);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_RESCORE_COMMAND_H_
