// Fuzzes loading damaged Syzygy tables: the input replaces KQvK.rtbw beside
// an intact KQvK.rtbz (from tests/data/rescorer/tables; run from the source
// root). SyzygyTablebase::Load must refuse a damaged file, naming it, or,
// when the bytes are a valid table after all, probe every placement of the
// queen without failing. fathom itself would read past a damaged file's
// mapping: the load-time checks are what keep such a file out.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "stages/lc0/chess/position.h"
#include "stages/lc0/chess/syzygy_tablebase.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice::lc0::chess;
  namespace fs = std::filesystem;
  static const std::string dtz = [] {
    std::ifstream in("tests/data/rescorer/tables/KQvK.rtbz", std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    if (bytes.str().empty()) std::abort();  // run from the source root
    return bytes.str();
  }();
  // A fresh directory per input: fathom re-reads tables only for new paths.
  static uint64_t round = 0;
  const fs::path dir = fs::temp_directory_path() /
                       ("sluice_syzygy_fuzz_" + std::to_string(getpid()) + "_" +
                        std::to_string(round++));
  fs::create_directories(dir);
  {
    std::ofstream(dir / "KQvK.rtbw", std::ios::binary)
        .write(reinterpret_cast<const char*>(data), size);
    std::ofstream(dir / "KQvK.rtbz", std::ios::binary) << dtz;
  }
  {
    auto tables = SyzygyTablebase::Load({dir.string()});
    if (tables.ok()) {
      for (int queen = 0; queen < 64; ++queen) {
        if (queen == 0 || queen == 63) continue;
        Position position;
        position.Put(kWhite, kKing, 0);
        position.Put(kBlack, kKing, 63);
        position.Put(kWhite, kQueen, queen);
        (*tables)->ProbeWdl(position);
      }
    } else if (tables.status().message().find("KQvK.rtbw") ==
               std::string::npos) {
      __builtin_trap();
    }
  }
  fs::remove_all(dir);
  return 0;
}
