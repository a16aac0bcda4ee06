// Edits of a StageConfig shared by the memory plan, tools and tests.
#ifndef SLUICE_ENGINE_STAGE_CONFIG_EDIT_H_
#define SLUICE_ENGINE_STAGE_CONFIG_EDIT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "proto/data_loader_config.pb.h"

namespace sluice {

// Sets the capacity of `stage`'s output named `output`, adding the output's
// entry when the config does not list it.
inline void SetOutputCapacity(StageConfig& stage, std::string_view output,
                              uint64_t capacity) {
  for (QueueConfig& listed : *stage.mutable_output()) {
    if (listed.name() == output) {
      listed.set_capacity(capacity);
      return;
    }
  }
  QueueConfig& added = *stage.add_output();
  added.set_name(std::string(output));
  added.set_capacity(capacity);
}

}  // namespace sluice

#endif  // SLUICE_ENGINE_STAGE_CONFIG_EDIT_H_
