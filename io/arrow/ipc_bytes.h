// ReadIpcBytes: the synchronous path over bytes already in memory, for
// tests, tools and fuzzing. Accepts the IPC file format (by its ARROW1
// magic) and the stream format (with or without continuation markers),
// through the same parsing code as ArrowFileReader and ArrowStreamReader.
//
//   absl::StatusOr<IpcContents> contents =
//       ReadIpcBytes(bytes, "train.arrow");
//   for (const RecordBatch& batch : contents->batches) ...
//
// The batches' views point into `bytes`: keep them alive while the batches
// are in use. Memory: the schema and the views, never a copy of the data.
#ifndef SLUICE_IO_ARROW_IPC_BYTES_H_
#define SLUICE_IO_ARROW_IPC_BYTES_H_

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "io/arrow/ipc_limits.h"
#include "io/arrow/record_batch.h"
#include "io/arrow/schema.h"

namespace sluice::io::arrow {

// Everything in one IPC file or stream.
struct IpcContents {
  Schema schema;
  std::vector<RecordBatch> batches;
};

// Parses a whole IPC file or stream. `name` starts every error message.
// Errors: DataLoss for damage, Unimplemented for an unsupported feature,
// ResourceExhausted for an IpcLimits bound; never a partial result.
absl::StatusOr<IpcContents> ReadIpcBytes(std::span<const std::byte> bytes,
                                         std::string_view name,
                                         const IpcLimits& limits = {});

}  // namespace sluice::io::arrow

#endif  // SLUICE_IO_ARROW_IPC_BYTES_H_
