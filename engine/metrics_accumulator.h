// Folds interval metrics into totals, by reflection over the metrics protos:
// numeric fields add up, fields marked [(sluice.gauge) = true] (and strings,
// bools, enums) take the newest value, nested messages fold recursively.
// Elements of a repeated message field are matched by their field 1 when it
// is a string (a name or a reason: stages, queues, skip counts), else by
// position. Every LoadMetricProto's `load` is then recomputed from its busy
// and capacity seconds.
#ifndef SLUICE_ENGINE_METRICS_ACCUMULATOR_H_
#define SLUICE_ENGINE_METRICS_ACCUMULATOR_H_

#include <cstdint>
#include <map>
#include <string>

#include "google/protobuf/message.h"
#include "proto/data_loader_metrics.pb.h"

namespace sluice {

// Adds `interval` into `total`; both must be of the same message type.
void AccumulateMetrics(const google::protobuf::Message& interval,
                       google::protobuf::Message* total);

// The stage's skip counts by reason (0 for a reason never counted).
std::map<std::string, uint64_t> SkippedByReason(const StageMetricProto& stage);

}  // namespace sluice

#endif  // SLUICE_ENGINE_METRICS_ACCUMULATOR_H_
