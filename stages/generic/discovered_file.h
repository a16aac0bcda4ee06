// The items file discovery (FilePathProvider) sends: a path and the phase
// of the scan that found it. Workload-neutral: the stages that open the
// files (lc0's chunk source loader, the Arrow source) decide what a file is.
#ifndef SLUICE_STAGES_GENERIC_DISCOVERED_FILE_H_
#define SLUICE_STAGES_GENERIC_DISCOVERED_FILE_H_

#include <string>

namespace sluice {

// Where a discovered file comes from.
enum class DiscoveryPhase {
  kInitialScan,          // present when the provider started
  kInitialScanComplete,  // marker: every initial-scan file was sent before
  kNew,                  // appeared later (complete: closed or renamed in)
};

// FilePathProvider's output: one file, or the end-of-scan marker (empty
// path).
struct DiscoveredFile {
  std::string path;
  DiscoveryPhase phase = DiscoveryPhase::kNew;
};

}  // namespace sluice

#endif  // SLUICE_STAGES_GENERIC_DISCOVERED_FILE_H_
