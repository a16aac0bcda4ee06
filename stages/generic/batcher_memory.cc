// Batcher's terms of the pipeline's memory model (batcher.h, "Memory").
#include "stages/generic/batcher.h"

namespace sluice {

void Batcher::DescribeMemory(MemoryModelBuilder& builder) const {
  const uint64_t batch = buffers_->bytes();
  builder.AddOutput(output_, "output", batch);
  builder.Add({.part = "batches",
               .what = "the batch being filled and those the consumer holds "
                       "(the one it uses, the one it takes next)",
               .count = 3,
               .bytes_each = batch});
}

}  // namespace sluice
