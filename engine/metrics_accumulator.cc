#include "engine/metrics_accumulator.h"

#include <optional>
#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "proto/data_loader_metrics.pb.h"
#include "proto/metric_options.pb.h"

namespace sluice {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

void AccumulateFields(const Message& from, Message* to);

bool IsGauge(const FieldDescriptor* field) {
  return field->options().GetExtension(gauge);
}

void AccumulateScalar(const Message& from, Message* to,
                      const FieldDescriptor* field) {
  const Reflection* in = from.GetReflection();
  const Reflection* out = to->GetReflection();
  const bool add = !IsGauge(field) && out->HasField(*to, field);
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      out->SetInt32(
          to, field,
          in->GetInt32(from, field) + (add ? out->GetInt32(*to, field) : 0));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      out->SetInt64(
          to, field,
          in->GetInt64(from, field) + (add ? out->GetInt64(*to, field) : 0));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      out->SetUInt32(
          to, field,
          in->GetUInt32(from, field) + (add ? out->GetUInt32(*to, field) : 0));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      out->SetUInt64(
          to, field,
          in->GetUInt64(from, field) + (add ? out->GetUInt64(*to, field) : 0));
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      out->SetDouble(
          to, field,
          in->GetDouble(from, field) + (add ? out->GetDouble(*to, field) : 0));
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      out->SetFloat(
          to, field,
          in->GetFloat(from, field) + (add ? out->GetFloat(*to, field) : 0));
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      out->SetBool(to, field, in->GetBool(from, field));
      break;
    case FieldDescriptor::CPPTYPE_ENUM:
      out->SetEnum(to, field, in->GetEnum(from, field));
      break;
    case FieldDescriptor::CPPTYPE_STRING:
      out->SetString(to, field, in->GetString(from, field));
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
}

// The matching key of a repeated element: its field 1 when that is a
// string, else nullopt (match by position).
std::optional<std::string> ElementKey(const Message& element) {
  const FieldDescriptor* first = element.GetDescriptor()->FindFieldByNumber(1);
  if (first == nullptr || first->is_repeated() ||
      first->cpp_type() != FieldDescriptor::CPPTYPE_STRING) {
    return std::nullopt;
  }
  return element.GetReflection()->GetString(element, first);
}

void AccumulateRepeated(const Message& from, Message* to,
                        const FieldDescriptor* field) {
  const Reflection* in = from.GetReflection();
  const Reflection* out = to->GetReflection();
  const int count = in->FieldSize(from, field);
  for (int i = 0; i < count; ++i) {
    const Message& element = in->GetRepeatedMessage(from, field, i);
    Message* target = nullptr;
    if (const std::optional<std::string> key = ElementKey(element)) {
      for (int j = 0; j < out->FieldSize(*to, field) && !target; ++j) {
        Message* candidate = out->MutableRepeatedMessage(to, field, j);
        if (ElementKey(*candidate) == key) target = candidate;
      }
    } else if (i < out->FieldSize(*to, field)) {
      target = out->MutableRepeatedMessage(to, field, i);
    }
    if (target == nullptr) {
      out->AddMessage(to, field)->CopyFrom(element);
    } else {
      AccumulateFields(element, target);
    }
  }
}

void RecomputeLoads(Message* message) {
  if (auto* load = dynamic_cast<LoadMetricProto*>(message)) {
    load->set_load(load->capacity_seconds() > 0
                       ? load->busy_seconds() / load->capacity_seconds()
                       : 0.0);
    return;
  }
  const Reflection* reflection = message->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(*message, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (field->is_repeated()) {
      for (int i = 0; i < reflection->FieldSize(*message, field); ++i) {
        RecomputeLoads(reflection->MutableRepeatedMessage(message, field, i));
      }
    } else {
      RecomputeLoads(reflection->MutableMessage(message, field));
    }
  }
}

void AccumulateFields(const Message& from, Message* to) {
  const Reflection* in = from.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  in->ListFields(from, &fields);
  for (const FieldDescriptor* field : fields) {
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        AccumulateRepeated(from, to, field);
      } else {
        AccumulateFields(in->GetMessage(from, field),
                         to->GetReflection()->MutableMessage(to, field));
      }
    } else if (!field->is_repeated()) {
      AccumulateScalar(from, to, field);
    }
  }
}

}  // namespace

void AccumulateMetrics(const Message& interval, Message* total) {
  AccumulateFields(interval, total);
  RecomputeLoads(total);
}

std::map<std::string, uint64_t> SkippedByReason(const StageMetricProto& stage) {
  std::map<std::string, uint64_t> counts;
  for (const SkipCountProto& skip : stage.skipped()) {
    counts[skip.reason()] += skip.count();
  }
  return counts;
}

}  // namespace sluice
