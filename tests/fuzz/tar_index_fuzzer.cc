// Fuzzes the tar indexer with arbitrary archive bytes: it must never crash,
// read out of bounds, or return a member that runs past the file.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "io/tar_index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  sluice::io::TarIndexer indexer(size, {.max_members = 10'000,
                                        .max_name_length = 4096,
                                        .max_pax_size = 1 << 16});
  while (std::optional<sluice::io::TarReadRequest> read = indexer.NextRead()) {
    if (read->offset + read->length > size) __builtin_trap();
    if (!indexer.OnData(file.substr(read->offset, read->length)).ok()) break;
  }
  for (const sluice::io::TarMember& member : indexer.TakeIndex().members) {
    if (member.data_offset + member.size > size) __builtin_trap();
  }
  return 0;
}
