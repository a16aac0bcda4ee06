#include "engine/channel_base.h"

#include <utility>

namespace sluice {
namespace {

uint64_t ReadCounter(std::atomic<uint64_t>& counter, bool reset) {
  return reset ? counter.exchange(0, std::memory_order_relaxed)
               : counter.load(std::memory_order_relaxed);
}

}  // namespace

ChannelBase::ChannelBase(std::string name, size_t capacity,
                         OverflowPolicy policy, std::type_index element_type,
                         std::string_view element_name)
    : capacity_(capacity),
      name_(std::move(name)),
      policy_(policy),
      element_type_(element_type),
      element_name_(element_name) {}

uint64_t ChannelBase::GetTotalPutCount(bool reset) {
  return ReadCounter(put_count_, reset);
}

uint64_t ChannelBase::GetTotalGetCount(bool reset) {
  return ReadCounter(get_count_, reset);
}

uint64_t ChannelBase::GetTotalDropCount(bool reset) {
  return ReadCounter(drop_count_, reset);
}

QueueMetricProto ChannelBase::Metrics(bool reset_counters) {
  QueueMetricProto metrics;
  metrics.set_name(name_);
  metrics.set_size(Size());
  metrics.set_capacity(capacity());
  metrics.set_put_count(GetTotalPutCount(reset_counters));
  metrics.set_get_count(GetTotalGetCount(reset_counters));
  metrics.set_drop_count(GetTotalDropCount(reset_counters));
  metrics.set_closed(IsClosed());
  metrics.set_element_type(std::string(element_name_));
  return metrics;
}

}  // namespace sluice
