// Fuzzes lc0's rescorer on one game: the record checks, the replay (moves
// found from the planes, legality, policy indices), the tablebase passes,
// policy adjustment, deblunder, format conversion and the V6/V7 output, on
// the 3-4-piece tables of tests/data/rescorer/tables (run from the source
// root). The first byte picks the options; the rest is the decompressed
// chunk. A game is either refused with a reason or rescored into whole
// records of the output version.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "stages/lc0/chess/syzygy_tablebase.h"
#include "stages/lc0/format/training_record.h"
#include "stages/lc0/rescorer/game_rescorer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice::lc0;
  static const std::shared_ptr<const chess::SyzygyTablebase> tables = [] {
    auto loaded = chess::SyzygyTablebase::Load({"tests/data/rescorer/tables"});
    if (!loaded.ok()) std::abort();  // run from the source root
    return *loaded;
  }();
  if (size < 1) return 0;
  const uint8_t choice = data[0];
  rescorer::RescoreOptions options;
  options.deblunder = choice & 1;
  options.deblunder_threshold = 0.1f;
  options.deblunder_width = (choice & 2) ? 0.03f : 0.0f;
  options.dtz_policy_boost = (choice & 4) ? 0.5f : 0.0f;
  options.temperature = (choice & 8) ? 0.7f : 1.0f;
  options.dist_offset = (choice & 16) ? -0.01f : 0.0f;
  options.new_input_format = (choice & 32) ? 3 : ((choice & 128) ? 1 : -1);
  options.output_version = (choice & 64) ? 7 : 6;
  const rescorer::GameRescorer rescorer(tables, options);
  const std::string_view records(reinterpret_cast<const char*>(data) + 1,
                                 size - 1);
  std::string out;
  rescorer::RescoreCounts counts;
  const auto rejection = rescorer.Rescore(records, &out, &counts);
  if (rejection) {
    if (rejection->reason.empty() || !out.empty()) __builtin_trap();
    return 0;
  }
  const size_t record_size =
      options.output_version == 7 ? kV7RecordSize : kV6RecordSize;
  if (out.size() % record_size != 0 || counts.games != 1) __builtin_trap();
  return 0;
}
