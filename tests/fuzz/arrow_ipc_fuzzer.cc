// Fuzzes Arrow IPC parsing (io::arrow::ReadIpcBytes): the file format when
// the input starts with ARROW1, else the stream format; then reads every
// value of every decoded column, so a view past its bytes is caught.
// Any input must end in contents or an error status, never a crash.
#include <cstddef>
#include <cstdint>
#include <span>

#include "io/arrow/ipc_bytes.h"

namespace {

using sluice::io::arrow::ArrayView;
using sluice::io::arrow::TypeId;

uint64_t Touch(const ArrayView& array) {
  uint64_t sum = 0;
  for (int64_t row = 0; row < array.length(); ++row) {
    sum += array.IsNull(row);
    const size_t width = sluice::io::arrow::FixedWidthBytes(array.type());
    if (width == 8) sum += array.Value<uint64_t>(row);
    if (width == 4) sum += array.Value<uint32_t>(row);
    if (width == 2) sum += array.Value<uint16_t>(row);
    if (width == 1) sum += array.Value<uint8_t>(row);
    switch (array.type()) {
      case TypeId::kBool:
        sum += array.Bool(row);
        break;
      case TypeId::kBinary:
      case TypeId::kLargeBinary:
      case TypeId::kUtf8:
      case TypeId::kLargeUtf8:
        for (std::byte byte : array.Binary(row)) {
          sum += std::to_integer<uint8_t>(byte);
        }
        break;
      case TypeId::kList:
      case TypeId::kLargeList:
      case TypeId::kFixedSizeList: {
        const auto [begin, end] = array.ListRange(row);
        if (begin < 0 || end > array.child(0).length()) __builtin_trap();
        sum += end - begin;
        break;
      }
      default:
        break;
    }
  }
  for (size_t i = 0; i < array.num_children(); ++i)
    sum += Touch(array.child(i));
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  // Small limits keep allocations and runs short on hostile lengths.
  const auto contents = sluice::io::arrow::ReadIpcBytes(
      bytes, "fuzz",
      {.max_metadata_bytes = 1 << 20, .max_body_bytes = 1 << 24});
  if (!contents.ok()) return 0;
  volatile uint64_t sink = 0;
  for (const auto& batch : contents->batches) {
    for (const ArrayView& column : batch.columns()) sink = sink + Touch(column);
  }
  return 0;
}
