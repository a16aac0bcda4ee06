// Fuzzes what the unpacker does with a decompressed chunk: chunk checks,
// splitting into records, up-conversion, record validation and tensor
// expansion of every accepted record. The first byte picks the expected
// input format.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stages/lc0/format/record_upconvert.h"
#include "stages/lc0/format/record_validator.h"
#include "stages/lc0/format/tensor_batch.h"
#include "stages/lc0/format/tensor_expansion.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice::lc0;
  if (size < 1) return 0;
  constexpr uint32_t kFormats[] = {1, 2, 3, 4, 5, 132, 133};
  const uint32_t format = kFormats[data[0] % 7];
  const std::string_view chunk(reinterpret_cast<const char*>(data) + 1,
                               size - 1);
  const ChunkCheck check = CheckChunk(chunk);
  if (check.reject.has_value()) return 0;
  if (check.record_count * check.record_size != chunk.size()) __builtin_trap();
  auto expander = TensorExpander::Create(format);
  auto batch = TensorBatch::Create(1);
  if (!expander.ok() || !batch.ok()) __builtin_trap();
  for (size_t i = 0; i < check.record_count; ++i) {
    V6TrainingRecord record;
    UpconvertToV6(chunk.substr(i * check.record_size, check.record_size),
                  check.version, &record);
    if (CheckRecord(record, check.version, format).has_value()) continue;
    expander->Expand(record, &*batch, 0);
  }
  return 0;
}
