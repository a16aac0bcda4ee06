// The demo's data sets, generated once into a cache directory and reused:
// synthetic lc0 tars (`sluice demo`, `sluice bench pipeline`) and synthetic
// audio clips in Arrow files (`sluice demo --workload audio`).
#ifndef SLUICE_BINDINGS_CLI_DEMO_DATA_H_
#define SLUICE_BINDINGS_CLI_DEMO_DATA_H_

#include <cstdint>
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

// As DemoDataDirectory(), with "/demo-audio-v1-<clips>" appended.
std::string AudioDemoDataDirectory(int64_t clips);

// Returns `directory` once it holds the complete audio demo data set
// (`sluice gen audio` with `clips` clips of 8 classes in 4 files, seed
// 2026), generating it first if needed into a temporary sibling renamed
// into place, with a progress line on `out`.
absl::StatusOr<std::string> EnsureAudioDemoData(const std::string& directory,
                                                int64_t clips,
                                                std::ostream& out);

}  // namespace sluice::cli

#endif  // SLUICE_BINDINGS_CLI_DEMO_DATA_H_
