// The demo's data set: synthetic lc0 tars generated once into a cache
// directory and reused (`sluice demo`, `sluice bench pipeline`).
#ifndef SLUICE_BINDINGS_CLI_DEMO_DATA_H_
#define SLUICE_BINDINGS_CLI_DEMO_DATA_H_

#include <ostream>
#include <string>

#include "absl/status/statusor.h"

namespace sluice::cli {

// $SLUICE_CACHE_DIR, else $XDG_CACHE_HOME/sluice, else ~/.cache/sluice, else
// /tmp/sluice-cache; with "/demo-data-v1" appended.
std::string DemoDataDirectory();

// Returns `directory` once it holds the complete demo data set (`games`
// games in tars of 100), generating it first if needed: on 2 threads, into a
// temporary sibling renamed into place, with progress lines on `out`.
absl::StatusOr<std::string> EnsureDemoData(const std::string& directory,
                                           int games, std::ostream& out);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_DEMO_DATA_H_
