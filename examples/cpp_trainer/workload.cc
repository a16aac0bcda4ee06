#include "workload.h"

#include "audio_model.h"
#include "lc0_model.h"

namespace trainer {

std::unique_ptr<Workload> MakeWorkload(const TrainerFlags& flags,
                                       int64_t classes) {
  switch (flags.workload) {
    case WorkloadKind::kLc0:
      return MakeLc0Workload(flags.blocks, flags.filters);
    case WorkloadKind::kAudio:
      return MakeAudioWorkload(flags.channels, classes);
  }
  return nullptr;
}

}  // namespace trainer
