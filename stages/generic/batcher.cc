#include "stages/generic/batcher.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <typeindex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/status_macros.h"
#include "engine/yield.h"

namespace sluice {
namespace {

// Examples taken from the input channel at once (one lock for all).
constexpr size_t kExamplesPerReceive = 64;
// The largest batch accepted at build time, in bytes.
constexpr uint64_t kMaxBatchBytes = uint64_t{1} << 40;
// The output channel holds up to this many bytes of batches, and between
// kMinOutputBatches and kMaxOutputBatches batches (OutputCapacity).
constexpr uint64_t kOutputBytes = uint64_t{8} << 20;
constexpr size_t kMinOutputBatches = 4;
constexpr size_t kMaxOutputBatches = 8;

// Batches the output channel holds. A channel wakes its blocked sender
// once per half its capacity taken, so small batches get a longer channel:
// with batches of 1 MiB, which a consumer takes tens of thousands of times
// a second, 8 places instead of 4 halve the batcher's wake-ups and raised
// arrow_source -> batcher on 2 threads from 70-77 % to 79-85 % of two
// threads of pread (docs/performance.md). More than 8 lost again: the
// batches in rotation no longer stay in the CPU's cache. Large batches
// keep 4, so memory stays bounded.
size_t OutputCapacity(uint64_t batch_bytes) {
  const uint64_t fit = kOutputBytes / std::max<uint64_t>(batch_bytes, 1);
  return static_cast<size_t>(
      std::clamp<uint64_t>(fit, kMinOutputBatches, kMaxOutputBatches));
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "[] (a scalar)";
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

std::vector<FieldName> FieldNamesOf(const std::vector<BatchTensorSpec>& specs) {
  std::vector<FieldName> names;
  names.reserve(specs.size());
  for (const BatchTensorSpec& spec : specs) names.emplace_back(spec.name);
  return names;
}

std::string DTypeNames() {
  std::string names;
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                      DType::kInt64, DType::kInt32, DType::kInt16, DType::kInt8,
                      DType::kUInt8, DType::kBool}) {
    absl::StrAppend(&names, names.empty() ? "" : ", ",
                    std::string(DTypeName(dtype)));
  }
  return names;
}

// The schema as tensor specs, or an error naming the offending entry.
absl::StatusOr<std::vector<BatchTensorSpec>> ParseSchema(
    const StageContext& context, const BatcherConfig& config) {
  if (config.field_size() == 0) {
    return context.FieldError(
        "field", "is empty; list at least one field (name, dtype, shape)");
  }
  std::vector<BatchTensorSpec> specs;
  std::map<std::string, int, std::less<>> index_of;
  uint64_t batch_bytes = 0;
  for (int i = 0; i < config.field_size(); ++i) {
    const BatcherConfig::Field& field = config.field(i);
    const std::string entry = absl::StrCat("field[", i, "]");
    if (field.name().empty()) {
      return context.FieldError(absl::StrCat(entry, ".name"),
                                "must not be empty");
    }
    const std::string quoted = absl::StrCat("'", field.name(), "'");
    if (const auto [it, inserted] = index_of.emplace(field.name(), i);
        !inserted) {
      return context.FieldError(
          absl::StrCat(entry, ".name"),
          absl::StrCat("is ", quoted, ", already the name of field[",
                       it->second, "]"));
    }
    const std::optional<DType> dtype = DTypeFromName(field.dtype());
    if (!dtype) {
      return context.FieldError(
          absl::StrCat(entry, ".dtype"),
          absl::StrCat("of ", quoted, " is '", field.dtype(),
                       "'; expected one of ", DTypeNames()));
    }
    uint64_t bytes = DTypeSize(*dtype) * uint64_t{config.batch_size()};
    for (int d = 0; d < field.shape_size(); ++d) {
      const int64_t dimension = field.shape(d);
      if (dimension < 0) {
        return context.FieldError(
            absl::StrCat(entry, ".shape"),
            absl::StrCat("of ", quoted, " has dimension ", dimension,
                         " at index ", d, "; dimensions must be >= 0"));
      }
      if (dimension > 0 && bytes > kMaxBatchBytes / dimension) {
        bytes = kMaxBatchBytes + 1;
      } else {
        bytes *= static_cast<uint64_t>(dimension);
      }
    }
    batch_bytes += bytes;
    if (batch_bytes > kMaxBatchBytes) {
      return context.FieldError(
          absl::StrCat(entry, ".shape"),
          absl::StrCat("of ", quoted, " makes a batch of ", config.batch_size(),
                       " larger than ", kMaxBatchBytes, " bytes"));
    }
    specs.push_back(BatchTensorSpec{
        .name = field.name(),
        .dtype = *dtype,
        .example_shape = {field.shape().begin(), field.shape().end()}});
  }
  return specs;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Stage>> Batcher::Create(
    const StageContext& context) {
  const BatcherConfig& config = context.config().batcher();
  if (config.batch_size() == 0) {
    return context.FieldError("batch_size", "must be at least 1");
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<BatchTensorSpec> specs,
                          ParseSchema(context, config));
  if (context.inputs().size() == 1 &&
      context.inputs()[0].channel->element_type() ==
          std::type_index(typeid(ExampleBlock))) {
    SLUICE_ASSIGN_OR_RETURN(Channel<ExampleBlock> * blocks,
                            context.SingleInput<ExampleBlock>());
    // A source that can cut its blocks on batch boundaries (arrow_source's
    // block_rows) lets every batch be a view of one block.
    blocks->set_preferred_group_rows(config.batch_size());
    return std::unique_ptr<Stage>(
        new Batcher(context, config, std::move(specs), nullptr, blocks));
  }
  SLUICE_ASSIGN_OR_RETURN(Channel<Example> * input,
                          context.SingleInput<Example>());
  if (config.block_order() == BatcherConfig::VIEWS_FIRST) {
    return context.FieldError(
        "block_order",
        "VIEWS_FIRST orders rows that come in blocks (arrow_source's "
        "output: ROW_BLOCKS); this batcher's input gives Examples");
  }
  return std::unique_ptr<Stage>(
      new Batcher(context, config, std::move(specs), input, nullptr));
}

Batcher::Batcher(const StageContext& context, const BatcherConfig& config,
                 std::vector<BatchTensorSpec> specs, Channel<Example>* input,
                 Channel<ExampleBlock>* block_input)
    : Stage(context),
      batch_size_(config.batch_size()),
      last_batch_(config.last_batch()),
      views_first_(config.block_order() == BatcherConfig::VIEWS_FIRST),
      specs_(std::move(specs)),
      field_names_(FieldNamesOf(specs_)),
      input_(input),
      block_input_(block_input),
      output_(AddOutput<TypedBatch>(
          "output",
          OutputCapacity(TypedBatch::AllocationBytes(specs_, batch_size_)))),
      // Enough free buffers for the batches the output channel, a consumer
      // and the one being filled hold at once: steady state allocates
      // nothing.
      buffers_(BatchBufferPool::Create(
          TypedBatch::AllocationBytes(specs_, batch_size_),
          output_->capacity() + 3)),
      skip_log_limiter_(absl::Seconds(5)),
      sources_(specs_.size(), nullptr),
      position_hints_(specs_.size(), 0),
      block_sources_(specs_.size(), nullptr) {}

void Batcher::Start(const StageRuntime& runtime) {
  SpawnWorkers(runtime, 1, [this](int) {
    return block_input_ != nullptr ? RunBlocks() : Run();
  });
}

asio::awaitable<bool> Batcher::Emit(TypedBatch batch) {
  const size_t size = batch.size();
  if (!co_await output_->Send(std::move(batch), load_meter())) {
    co_return false;
  }
  batches_.fetch_add(1, std::memory_order_relaxed);
  examples_.fetch_add(size, std::memory_order_relaxed);
  co_return true;
}

asio::awaitable<void> Batcher::Run() {
  std::vector<Example> examples;
  examples.reserve(kExamplesPerReceive);
  std::optional<TypedBatch> open;
  size_t filled = 0;
  size_t since_yield = 0;
  BatchEnd taken;  // in the input so far (for checkpoints)
  while (co_await input_->ReceiveSome(examples, kExamplesPerReceive,
                                      load_meter())) {
    for (const Example& example : examples) {
      ++taken.taken;
      taken.last = CheckpointCursor(example);
      if (!Match(example)) continue;
      if (!open) open = NewBatch();
      CopyInto(*open, filled);
      if (++filled < batch_size_) continue;
      TypedBatch full = std::move(*open);
      open.reset();
      filled = 0;
      LogBatchEnd(taken);
      if (!co_await Emit(std::move(full))) co_return;
    }
    since_yield += examples.size();
    examples.clear();
    if (output_->IsClosed()) co_return;  // cancelled by Stop()
    // About one batch of CPU work per slice: let other coroutines run.
    if (since_yield >= batch_size_) {
      since_yield = 0;
      co_await YieldToOtherCoroutines();
    }
  }
  co_await EmitPartial(std::move(open), filled, taken);
}

bool Batcher::MatchBlock(const ExampleBlock& block) {
  const uint64_t rows = static_cast<uint64_t>(block.rows());
  for (size_t i = 0; i < specs_.size(); ++i) {
    const BatchTensorSpec& spec = specs_[i];
    const BlockColumn* column = block.Find(spec.name);
    if (column == nullptr) {
      std::vector<std::string> names;
      for (const BlockColumn& c : block.columns()) names.push_back(c.name);
      Skip("missing_field", spec,
           absl::StrCat("is missing; the examples have [",
                        absl::StrJoin(names, ", "), "]"),
           rows);
      return false;
    }
    if (column->dtype != spec.dtype) {
      Skip("wrong_dtype", spec,
           absl::StrCat("has dtype ", std::string(DTypeName(column->dtype)),
                        ", expected ", std::string(DTypeName(spec.dtype))),
           rows);
      return false;
    }
    if (column->example_shape != spec.example_shape) {
      Skip("wrong_shape", spec,
           absl::StrCat("has shape ", ShapeText(column->example_shape),
                        ", expected ", ShapeText(spec.example_shape)),
           rows);
      return false;
    }
    if (column->example_bytes != spec.ExampleBytes()) {
      Skip("wrong_size", spec,
           absl::StrCat("holds ", column->example_bytes, " bytes, expected ",
                        spec.ExampleBytes(), " for its shape and dtype"),
           rows);
      return false;
    }
    block_sources_[i] = column;
  }
  return true;
}

bool Batcher::Match(const Example& example) {
  const auto& fields = example.fields();
  for (size_t i = 0; i < specs_.size(); ++i) {
    const BatchTensorSpec& spec = specs_[i];
    const ExampleField* field = nullptr;
    size_t& hint = position_hints_[i];
    const FieldName name = field_names_[i];
    if (hint < fields.size() && fields[hint].first == name) {
      field = &fields[hint].second;
    } else {
      for (size_t f = 0; f < fields.size(); ++f) {
        if (fields[f].first == name) {
          field = &fields[f].second;
          hint = f;
          break;
        }
      }
    }
    if (field == nullptr) {
      std::vector<std::string> names;
      for (const auto& [name, value] : fields) names.push_back(name);
      Skip("missing_field", spec,
           absl::StrCat("is missing; the example has [",
                        absl::StrJoin(names, ", "), "]"));
      return false;
    }
    if (field->dtype() != spec.dtype) {
      Skip("wrong_dtype", spec,
           absl::StrCat("has dtype ", std::string(DTypeName(field->dtype())),
                        ", expected ", std::string(DTypeName(spec.dtype))));
      return false;
    }
    if (field->shape() != spec.example_shape) {
      Skip("wrong_shape", spec,
           absl::StrCat("has shape ", ShapeText(field->shape()), ", expected ",
                        ShapeText(spec.example_shape)));
      return false;
    }
    const std::span<const std::byte> bytes = field->bytes();
    if (bytes.size() != spec.ExampleBytes()) {
      Skip("wrong_size", spec,
           absl::StrCat("holds ", bytes.size(), " bytes, expected ",
                        spec.ExampleBytes(), " for its shape and dtype"));
      return false;
    }
    sources_[i] = bytes.data();
  }
  return true;
}

void Batcher::Skip(std::string_view reason, const BatchTensorSpec& spec,
                   std::string_view problem, uint64_t count) {
  CountSkip(reason, count);
  if (skip_log_limiter_.Allow()) {
    LogWarning("stage '", name(), "' (", type(), "): skipping ",
               count == 1 ? std::string("an example")
                          : absl::StrCat(count, " examples"),
               " (", reason, "): field '", spec.name, "' ", problem);
  }
}

TypedBatch Batcher::NewBatch() {
  absl::StatusOr<TypedBatch> batch =
      TypedBatch::Allocate(specs_, batch_size_, buffers_);
  if (!batch.ok()) {
    throw std::runtime_error(
        absl::StrCat("stage '", name(), "': ", batch.status().ToString()));
  }
  return *std::move(batch);
}

void Batcher::CopyInto(const TypedBatch& batch, size_t slot) const {
  for (size_t i = 0; i < specs_.size(); ++i) {
    const size_t bytes = specs_[i].ExampleBytes();
    std::memcpy(static_cast<std::byte*>(batch.tensor(i).data) + slot * bytes,
                sources_[i], bytes);
  }
}

asio::awaitable<void> Batcher::EmitPartial(std::optional<TypedBatch> open,
                                           size_t filled, BatchEnd end) {
  if (!open) co_return;
  std::optional<TypedBatch> last = FinishPartial(std::move(*open), filled);
  if (!last) co_return;
  LogBatchEnd(end);
  co_await Emit(std::move(*last));
}

std::optional<TypedBatch> Batcher::FinishPartial(TypedBatch batch,
                                                 size_t filled) {
  switch (last_batch_) {
    case BatcherConfig::DROP:
      dropped_.fetch_add(filled, std::memory_order_relaxed);
      return std::nullopt;
    case BatcherConfig::PAD_REPEAT:
      for (size_t i = 0; i < specs_.size(); ++i) {
        const size_t bytes = specs_[i].ExampleBytes();
        std::byte* data = static_cast<std::byte*>(batch.tensor(i).data);
        for (size_t slot = filled; slot < batch_size_; ++slot) {
          std::memcpy(data + slot * bytes, data + (slot % filled) * bytes,
                      bytes);
        }
      }
      padded_.fetch_add(batch_size_ - filled, std::memory_order_relaxed);
      return batch;
    case BatcherConfig::KEEP:
      break;
  }
  batch.Truncate(filled);
  return batch;
}

void Batcher::AddMetrics(StageMetricProto& metrics) {
  BatcherMetricsProto* batcher = metrics.mutable_batcher();
  batcher->set_batches(batches_.exchange(0, std::memory_order_relaxed));
  batcher->set_examples(examples_.exchange(0, std::memory_order_relaxed));
  batcher->set_padded_examples(padded_.exchange(0, std::memory_order_relaxed));
  batcher->set_dropped_examples(
      dropped_.exchange(0, std::memory_order_relaxed));
  batcher->set_batch_buffer_bytes(buffers_->allocated_buffers() *
                                  buffers_->bytes());
}

}  // namespace sluice
