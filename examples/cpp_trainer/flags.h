// The trainer's command line: every flag, its default, and the parser.
//
//   TrainerFlags flags = ParseFlags(argc, argv);  // throws FlagError
//   if (flags.help) std::fputs(kUsage, stdout);
#ifndef CPP_TRAINER_FLAGS_H_
#define CPP_TRAINER_FLAGS_H_

#include <cstdint>
#include <stdexcept>
#include <string>

namespace trainer {

enum class WorkloadKind { kLc0, kAudio };

// "lc0" or "audio".
const char* WorkloadName(WorkloadKind workload);

// A flag the trainer cannot use; what() names the flag and says why.
class FlagError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct TrainerFlags {
  bool help = false;
  WorkloadKind workload = WorkloadKind::kLc0;
  std::string data;       // training data directory (required)
  std::string eval_data;  // held-out data: one eval pass after training
  // Pipelines (text-format DataLoaderConfig) instead of the installed
  // defaults; their file_path_provider reads --data / --eval-data.
  std::string pipeline;
  std::string eval_pipeline;

  int64_t steps = 0;       // 0: the workload's default
  int64_t batch_size = 0;  // 0: the workload's default
  int64_t eval_every = 0;  // also evaluate every N steps (0: never)
  int64_t log_every = 10;  // print a line every N steps
  // Reservoir of the sampler (lc0) or shuffle buffer (audio), 0: the
  // pipeline's; training starts once a quarter of it (lc0) or 80 % (audio)
  // is in.
  int64_t shuffle_buffer = 0;
  int loader_threads = 1;  // sluice worker threads (0: one per core)
  int torch_threads = 0;   // torch intra-op threads (0: cores - loader)
  uint64_t seed = 0;
  bool deterministic = false;

  std::string optimizer = "adam";  // adam or sgd (momentum 0.9, Nesterov)
  double learning_rate = 0;        // 0: the workload's default
  double weight_decay = 0;
  // lc0 model: residual blocks x filters.
  int blocks = 4;
  int filters = 32;
  // audio model: channels of the first convolution (doubled per block),
  // and labels (0: 1 + the largest label of the first batch).
  int channels = 16;
  int64_t classes = 0;

  std::string checkpoint;  // written at the end, on Ctrl-C, every N steps
  int64_t checkpoint_every = 0;
  std::string resume;  // continue from this checkpoint
  std::string report;  // per-step CSV
};

// Parses argv (argv[0] is the program); throws FlagError for an unknown
// flag, a missing or malformed value, or a combination that cannot work.
// Fills the workload's defaults for the flags left at 0.
TrainerFlags ParseFlags(int argc, const char* const* argv);

// The --help text.
extern const char kUsage[];

}  // namespace trainer

#endif  // CPP_TRAINER_FLAGS_H_
