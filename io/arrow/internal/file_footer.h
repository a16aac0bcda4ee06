// FileBlock / FileFooter: what the footer of an Arrow IPC file says, as
// plain values (no flatbuffers types), so public headers can hold them.
#ifndef SLUICE_IO_ARROW_INTERNAL_FILE_FOOTER_H_
#define SLUICE_IO_ARROW_INTERNAL_FILE_FOOTER_H_

#include <cstdint>
#include <vector>

#include "io/arrow/schema.h"

namespace sluice::io::arrow::internal {

// One record batch of an IPC file, as its footer places it: the message
// (prefix + metadata) at `offset`, then the body.
struct FileBlock {
  int64_t offset = 0;
  int64_t metadata_bytes = 0;
  int64_t body_bytes = 0;
};

// The schema and record batch blocks of an IPC file.
struct FileFooter {
  Schema schema;
  std::vector<FileBlock> record_batches;
};

}  // namespace sluice::io::arrow::internal

#endif  // SLUICE_IO_ARROW_INTERNAL_FILE_FOOTER_H_
