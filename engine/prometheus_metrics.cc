#include "engine/prometheus_metrics.h"

#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/prometheus_text.h"
#include "google/protobuf/descriptor.h"
#include "proto/metric_options.pb.h"

namespace sluice {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using Stages = google::protobuf::RepeatedPtrField<StageMetricProto>;

constexpr PrometheusText::Type kCounter = PrometheusText::kCounter;
constexpr PrometheusText::Type kGauge = PrometheusText::kGauge;

// StageMetricProto fields rendered as the sluice_stage_* and
// sluice_channel_* families; every other message field is rendered by
// reflection (AddFields).
bool IsCommonStageField(const FieldDescriptor* field) {
  const int number = field->number();
  return number == StageMetricProto::kNameFieldNumber ||
         number == StageMetricProto::kTypeFieldNumber ||
         number == StageMetricProto::kLoadFieldNumber ||
         number == StageMetricProto::kSkippedFieldNumber ||
         number == StageMetricProto::kOutputQueueMetricsFieldNumber;
}

// A numeric or bool field's value; nullopt for strings, enums, messages.
std::optional<double> NumericValue(const Message& message,
                                   const FieldDescriptor* field) {
  const Reflection* reflection = message.GetReflection();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return reflection->GetInt32(message, field);
    case FieldDescriptor::CPPTYPE_INT64:
      return static_cast<double>(reflection->GetInt64(message, field));
    case FieldDescriptor::CPPTYPE_UINT32:
      return reflection->GetUInt32(message, field);
    case FieldDescriptor::CPPTYPE_UINT64:
      return static_cast<double>(reflection->GetUInt64(message, field));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return reflection->GetDouble(message, field);
    case FieldDescriptor::CPPTYPE_FLOAT:
      return reflection->GetFloat(message, field);
    case FieldDescriptor::CPPTYPE_BOOL:
      return reflection->GetBool(message, field) ? 1.0 : 0.0;
    default:
      return std::nullopt;
  }
}

// Renders one stage's stage-specific metrics: every numeric field of
// `total` as `prefix + name` (`_total` added to counters), gauges taken
// from `interval` when it has them. Adds the fields marked batch_rows to
// `*examples`.
class StageFieldRenderer {
 public:
  StageFieldRenderer(const std::string& stage, const std::string& type,
                     PrometheusText* page, double* examples)
      : stage_(stage), type_(type), page_(page), examples_(examples) {}

  void AddFields(const Message& total, const Message* interval,
                 const std::string& prefix) {
    const Reflection* reflection = total.GetReflection();
    std::vector<const FieldDescriptor*> fields;
    reflection->ListFields(total, &fields);
    for (const FieldDescriptor* field : fields) {
      if (field->is_repeated()) continue;
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        const Message* nested_interval =
            interval != nullptr &&
                    interval->GetReflection()->HasField(*interval, field)
                ? &interval->GetReflection()->GetMessage(*interval, field)
                : nullptr;
        AddFields(reflection->GetMessage(total, field), nested_interval,
                  absl::StrCat(prefix, field->name(), "_"));
        continue;
      }
      AddField(total, interval, field, prefix);
    }
  }

 private:
  void AddField(const Message& total, const Message* interval,
                const FieldDescriptor* field, const std::string& prefix) {
    const bool gauge = field->options().GetExtension(sluice::gauge);
    const Message& source =
        gauge && interval != nullptr &&
                interval->GetReflection()->HasField(*interval, field)
            ? *interval
            : total;
    const std::optional<double> value = NumericValue(source, field);
    if (!value.has_value()) return;
    if (field->options().GetExtension(batch_rows)) *examples_ += *value;
    page_->Add(absl::StrCat(prefix, field->name(), gauge ? "" : "_total"),
               gauge ? kGauge : kCounter,
               absl::StrCat(field->full_name(), " of each ", type_,
                            gauge ? " stage, now" : " stage, since start",
                            " (proto/data_loader_metrics.proto)."),
               {{"stage", stage_}}, *value);
  }

  const std::string& stage_;
  const std::string& type_;
  PrometheusText* const page_;
  double* const examples_;
};

const QueueMetricProto* FindChannel(const Stages& stages,
                                    const PipelineWiring::Channel& channel) {
  for (const StageMetricProto& stage : stages) {
    if (stage.name() != channel.stage) continue;
    for (const QueueMetricProto& queue : stage.output_queue_metrics()) {
      if (queue.name() == channel.output) return &queue;
    }
  }
  return nullptr;
}

void AddChannels(const StageMetricProto& total,
                 const StageMetricProto* interval, PrometheusText* page) {
  for (int q = 0; q < total.output_queue_metrics_size(); ++q) {
    const QueueMetricProto& queue = total.output_queue_metrics(q);
    // Gauges from the interval's entry of the same channel.
    const QueueMetricProto& now =
        interval != nullptr && q < interval->output_queue_metrics_size() &&
                interval->output_queue_metrics(q).name() == queue.name()
            ? interval->output_queue_metrics(q)
            : queue;
    const PrometheusText::Labels labels = {{"stage", total.name()},
                                           {"output", queue.name()}};
    page->Add("sluice_channel_items", kGauge,
              "Items buffered in the channel now.", labels, now.size());
    page->Add("sluice_channel_capacity", kGauge,
              "Items the channel buffers at most.", labels, now.capacity());
    page->Add("sluice_channel_sent_total", kCounter,
              "Items sent into the channel.", labels, queue.put_count());
    page->Add("sluice_channel_received_total", kCounter,
              "Items taken out of the channel.", labels, queue.get_count());
    page->Add("sluice_channel_dropped_total", kCounter,
              "Items the channel dropped by its overflow policy.", labels,
              queue.drop_count());
    page->Add("sluice_channel_closed", kGauge, "1 once the channel is closed.",
              labels, now.closed() ? 1 : 0);
  }
}

// The stage-level families of one stage; stage-specific fields go through
// `fields`.
void AddStage(const StageMetricProto& total, const StageMetricProto* interval,
              uint64_t items_in, bool has_inputs, PrometheusText* page,
              double* examples) {
  const PrometheusText::Labels stage = {{"stage", total.name()}};
  page->Add("sluice_stage_info", kGauge,
            "1 for every stage, with its type (the StageConfig field that "
            "configures it).",
            {{"stage", total.name()}, {"type", total.type()}}, 1);
  const LoadMetricProto& load =
      interval != nullptr ? interval->load() : total.load();
  page->Add("sluice_stage_load", kGauge,
            "Fraction of the stage's coroutine time spent working over the "
            "last metrics interval, 0 to 1.",
            stage, load.load());
  page->Add("sluice_stage_busy_seconds_total", kCounter,
            "Seconds the stage's coroutines spent working.", stage,
            total.load().busy_seconds());
  page->Add("sluice_stage_capacity_seconds_total", kCounter,
            "Wall seconds times the stage's coroutines: busy seconds over "
            "these is the stage's load.",
            stage, total.load().capacity_seconds());
  page->Add("sluice_stage_workers", kGauge,
            "Coroutines of the stage running now.", stage, load.workers());
  if (has_inputs) {
    page->Add("sluice_stage_items_in_total", kCounter,
              "Items the stage took from its input channels.", stage, items_in);
  }
  if (total.output_queue_metrics_size() > 0) {
    uint64_t items_out = 0;
    for (const QueueMetricProto& queue : total.output_queue_metrics()) {
      items_out += queue.put_count();
    }
    page->Add("sluice_stage_items_out_total", kCounter,
              "Items the stage sent into its output channels.", stage,
              items_out);
  }
  for (const SkipCountProto& skip : total.skipped()) {
    page->Add("sluice_stage_skipped_total", kCounter,
              "Items the stage skipped as bad input, by reason.",
              {{"stage", total.name()}, {"reason", skip.reason()}},
              skip.count());
  }
  StageFieldRenderer fields(total.name(), total.type(), page, examples);
  const Reflection* reflection = total.GetReflection();
  std::vector<const FieldDescriptor*> set;
  reflection->ListFields(total, &set);
  for (const FieldDescriptor* field : set) {
    if (IsCommonStageField(field) ||
        field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE ||
        field->is_repeated()) {
      continue;
    }
    const Message* nested_interval =
        interval != nullptr && reflection->HasField(*interval, field)
            ? &reflection->GetMessage(*interval, field)
            : nullptr;
    fields.AddFields(reflection->GetMessage(total, field), nested_interval,
                     absl::StrCat("sluice_", field->name(), "_"));
  }
}

void AddIo(const DataLoaderMetricsProto& metrics, PrometheusText* page) {
  if (metrics.io_backend().empty()) return;
  constexpr char kReads[] =
      "File reads, by what served them: page_cache (copied at once) or the "
      "backend (io_uring or its fallback). A read split between the two "
      "counts in both.";
  constexpr char kBytes[] = "Bytes file reads returned, by what served them.";
  const PrometheusText::Labels cache = {{"backend", "page_cache"}};
  const PrometheusText::Labels backend = {{"backend", metrics.io_backend()}};
  page->Add("sluice_io_reads_total", kCounter, kReads, cache,
            metrics.reads_from_page_cache());
  page->Add("sluice_io_reads_total", kCounter, kReads, backend,
            metrics.reads_through_backend());
  page->Add("sluice_io_read_bytes_total", kCounter, kBytes, cache,
            metrics.bytes_from_page_cache());
  page->Add("sluice_io_read_bytes_total", kCounter, kBytes, backend,
            metrics.bytes_through_backend());
}

// The families every Prometheus client library exports for its process.
void AddProcess(const ProcessStats& process, PrometheusText* page) {
  page->Add("process_cpu_seconds_total", kCounter,
            "Total user and system CPU time spent in seconds.", {},
            process.cpu_seconds);
  page->Add("process_resident_memory_bytes", kGauge,
            "Resident memory size in bytes.", {}, process.rss_bytes);
  page->Add("process_virtual_memory_bytes", kGauge,
            "Virtual memory size in bytes.", {}, process.virtual_bytes);
  page->Add("process_start_time_seconds", kGauge,
            "Start time of the process since unix epoch in seconds.", {},
            process.start_time_seconds);
  page->Add("process_open_fds", kGauge, "Number of open file descriptors.", {},
            process.open_fds);
  page->Add("process_max_fds", kGauge,
            "Maximum number of open file descriptors.", {}, process.max_fds);
}

}  // namespace

std::string RenderPrometheusMetrics(const DataLoaderMetricsProto& metrics,
                                    const PipelineWiring& wiring,
                                    const ProcessStats& process) {
  PrometheusText page;
  const Stages& totals = metrics.total_stage_metrics();
  const Stages& intervals = metrics.stage_metrics();
  std::map<std::string_view, uint64_t> items_in;
  for (const PipelineWiring::Input& input : wiring.inputs) {
    const QueueMetricProto* channel = FindChannel(totals, input.channel);
    items_in[input.consumer] += channel != nullptr ? channel->get_count() : 0;
  }
  // Each stage's entry of the last interval (same order as the totals).
  std::vector<const StageMetricProto*> interval(totals.size(), nullptr);
  for (int i = 0; i < totals.size() && i < intervals.size(); ++i) {
    if (intervals[i].name() == totals[i].name()) interval[i] = &intervals[i];
  }
  double examples = 0;
  for (int i = 0; i < totals.size(); ++i) {
    const auto in = items_in.find(totals[i].name());
    AddStage(totals[i], interval[i], in != items_in.end() ? in->second : 0,
             in != items_in.end(), &page, &examples);
  }
  for (int i = 0; i < totals.size(); ++i) {
    AddChannels(totals[i], interval[i], &page);
  }
  for (const PipelineWiring::Output& output : wiring.outputs) {
    const QueueMetricProto* channel = FindChannel(totals, output.channel);
    if (channel == nullptr) continue;
    page.Add("sluice_batches_total", kCounter,
             "Items (batches) the loader handed to its caller, by output.",
             {{"output", output.alias}}, channel->get_count());
  }
  if (totals.size() > 0) {
    page.Add("sluice_examples_total", kCounter,
             "Examples (the rows of the batches: positions, clips) the "
             "pipeline's batching stages emitted.",
             {}, examples);
  }
  AddIo(metrics, &page);
  page.Add("sluice_pipeline_failed", kGauge,
           "1 once a stage failed and the pipeline stopped.", {},
           metrics.has_error() ? 1 : 0);
  AddProcess(process, &page);
  return page.Render();
}

}  // namespace sluice
