// IpcLimits: bounds that keep a hostile or corrupt Arrow IPC file from
// exhausting memory or time. Exceeding one is a ResourceExhausted status
// naming the file and the limit.
#ifndef SLUICE_IO_ARROW_IPC_LIMITS_H_
#define SLUICE_IO_ARROW_IPC_LIMITS_H_

#include <cstdint>

namespace sluice::io::arrow {

struct IpcLimits {
  // Bytes of one metadata flatbuffer (a message header or the file footer).
  int64_t max_metadata_bytes = int64_t{16} << 20;
  // Bytes of one record batch body: what one read allocates at most.
  int64_t max_body_bytes = int64_t{2} << 30;
  // Nesting of list / struct types (a column at top level has depth 1).
  int max_nesting_depth = 16;
};

}  // namespace sluice::io::arrow

#endif  // SLUICE_IO_ARROW_IPC_LIMITS_H_
