// Fuzzes the batch-file queue's parsers: the safetensors header, the batch
// file's metadata and schema, and meta.json. The first byte picks which.
// Any input must end in a value or an error status, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "io/batch_file_meta.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1,
                               size - 1);
  switch (data[0] % 3) {
    case 0:
      (void)sluice::ParseSafetensors(bytes, bytes.size(), 1 << 20);
      break;
    case 1:
      (void)sluice::ParseBatchFile(bytes, bytes.size());
      break;
    default:
      (void)sluice::ParseDatasetMeta(bytes);
      break;
  }
  return 0;
}
