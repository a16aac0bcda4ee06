// ArrowSource's terms of the pipeline's memory model (arrow_source.h,
// "Memory").
#include "stages/generic/arrow_source.h"

namespace sluice {
namespace {

// The model is built before any file is surveyed: a row of the mapped
// columns of a few seconds of encoded audio (`sluice gen audio`'s clips
// average 113 KB), and record batches of 256 such rows (`sluice gen
// audio`'s, and a common writer default).
constexpr uint64_t kRowBytesEstimate = uint64_t{128} << 10;
constexpr uint64_t kRecordBatchBytesEstimate = 256 * kRowBytesEstimate;

}  // namespace

void ArrowSource::DescribeMemory(MemoryModelBuilder& builder) const {
  // A queued example views its record batch: it keeps its row's share of
  // it alive (a block its rows' share).
  if (block_output_ != nullptr) {
    builder.AddOutput(block_output_, "output", kRecordBatchBytesEstimate);
  } else {
    builder.AddOutput(output_, "output", kRowBytesEstimate);
  }
  builder.Add({.part = "readahead",
               .what = "record batches being read, queued or emitted, and "
                       "the one queued rows straddle",
               .knob = MemoryKnob::kReadahead,
               .field = "readahead",
               .count = config_.readahead(),
               .min_count = 1,
               .bytes_each = kRecordBatchBytesEstimate,
               .fixed_bytes = kRecordBatchBytesEstimate});
}

}  // namespace sluice
