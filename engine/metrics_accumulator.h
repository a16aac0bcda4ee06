// Folds interval metrics into totals, by reflection over the metrics protos:
// numeric fields add up, fields marked [(sluice.gauge) = true] (and strings,
// bools, enums) take the newest value, nested messages and repeated
// messages (matched by position) and maps (matched by key) fold
// recursively. Every LoadMetricProto's `load` is then recomputed from its
// busy and capacity seconds.
#ifndef SLUICE_ENGINE_METRICS_ACCUMULATOR_H_
#define SLUICE_ENGINE_METRICS_ACCUMULATOR_H_

#include "google/protobuf/message.h"

namespace sluice {

// Adds `interval` into `total`; both must be of the same message type.
void AccumulateMetrics(const google::protobuf::Message& interval,
                       google::protobuf::Message* total);

}  // namespace sluice

#endif  // SLUICE_ENGINE_METRICS_ACCUMULATOR_H_
