#include "flags.h"

#include <charconv>
#include <functional>
#include <map>
#include <string_view>

namespace trainer {

const char kUsage[] =
    R"(usage: cpp_trainer --workload lc0|audio --data DIR [flags]

Trains a libtorch model on sluice batches: lc0 (a residual tower with
policy, value and moves-left heads over lc0 chunks, e.g. from
`sluice gen tar DIR --games N`) or audio (a CNN over log-mel
spectrograms of labelled clips in Arrow files, `sluice gen audio DIR`).

data
  --workload lc0|audio   what to train (default lc0)
  --data DIR             training data (required)
  --eval-data DIR        held-out data: one eval pass after training
                         (audio: accuracy; lc0: losses, policy accuracy)
  --eval-every N         also evaluate every N steps (needs --eval-data)
  --pipeline FILE        a text-format DataLoaderConfig instead of the
  --eval-pipeline FILE   installed default (its file discovery reads DIR)
  --shuffle-buffer N     reservoir (lc0) / shuffle buffer (audio) size
  --batch-size N         default: lc0 256, audio 64
  --loader-threads N     sluice worker threads (default 1; 0: one per core)
training
  --steps N              default: lc0 200, audio 400
  --torch-threads N      torch threads (default: cores - loader threads)
  --optimizer adam|sgd   default adam; sgd has momentum 0.9 (Nesterov)
  --lr X                 learning rate (default: adam 0.002, sgd 0.05)
  --weight-decay X       default 0
  --blocks N --filters N lc0 tower (default 4 x 32)
  --channels N           audio CNN width (default 16)
  --classes N            audio labels (default: 1 + the first batch's largest)
  --seed N               model initialisation and pipeline seed (default 0)
  --deterministic        the same batches and losses on every run (sluice's
                         deterministic mode, torch's deterministic kernels)
state and output
  --checkpoint FILE      model, optimizer and loader state, written
                         atomically at the end, on Ctrl-C and every
                         --checkpoint-every N steps
  --resume FILE          continue from a checkpoint (same flags)
  --report FILE.csv      per step: losses, accuracy, data wait, step time
  --log-every N          print a line every N steps (default 10)

Ctrl-C stops after the current step (saving the checkpoint when asked);
a second Ctrl-C exits at once.
)";

const char* WorkloadName(WorkloadKind workload) {
  return workload == WorkloadKind::kLc0 ? "lc0" : "audio";
}

namespace {

// `text` as a T of at least `min`; the error says why not (the caller
// names the flag).
template <typename T>
T ParseNumber(std::string_view text, T min) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || ptr != end) {
    throw FlagError("'" + std::string(text) + "' is not a number");
  }
  if (value < min) {
    throw FlagError("must be at least " + std::to_string(min) + ", not " +
                    std::string(text));
  }
  return value;
}

// Checks the combinations and fills the workload's defaults.
void Finish(TrainerFlags& flags) {
  if (flags.help) return;
  if (flags.data.empty()) throw FlagError("--data DIR is required");
  if (flags.eval_every > 0 && flags.eval_data.empty()) {
    throw FlagError("--eval-every needs --eval-data DIR");
  }
  if (flags.checkpoint_every > 0 && flags.checkpoint.empty()) {
    throw FlagError("--checkpoint-every needs --checkpoint FILE");
  }
  if (flags.optimizer != "adam" && flags.optimizer != "sgd") {
    throw FlagError("--optimizer must be adam or sgd, not '" + flags.optimizer +
                    "'");
  }
  const bool lc0 = flags.workload == WorkloadKind::kLc0;
  if (flags.steps == 0) flags.steps = lc0 ? 200 : 400;
  if (flags.batch_size == 0) flags.batch_size = lc0 ? 256 : 64;
  if (flags.learning_rate == 0) {
    flags.learning_rate = flags.optimizer == "adam" ? 0.002 : 0.05;
  }
}

}  // namespace

TrainerFlags ParseFlags(int argc, const char* const* argv) {
  TrainerFlags flags;
  using Setter = std::function<void(std::string_view)>;
  auto text = [](std::string* field) {
    return [field](std::string_view value) { *field = value; };
  };
  auto integer = []<typename T>(T* field, T min) {
    return [field, min](std::string_view value) {
      *field = ParseNumber<T>(value, min);
    };
  };
  auto real = [](double* field) {
    return [field](std::string_view value) {
      *field = ParseNumber<double>(value, 0.0);
    };
  };
  const std::map<std::string_view, Setter> valued = {
      {"workload",
       [&](std::string_view value) {
         if (value == "lc0") {
           flags.workload = WorkloadKind::kLc0;
         } else if (value == "audio") {
           flags.workload = WorkloadKind::kAudio;
         } else {
           throw FlagError("must be lc0 or audio, not '" + std::string(value) +
                           "'");
         }
       }},
      {"data", text(&flags.data)},
      {"eval-data", text(&flags.eval_data)},
      {"pipeline", text(&flags.pipeline)},
      {"eval-pipeline", text(&flags.eval_pipeline)},
      {"steps", integer(&flags.steps, int64_t{1})},
      {"batch-size", integer(&flags.batch_size, int64_t{1})},
      {"eval-every", integer(&flags.eval_every, int64_t{1})},
      {"log-every", integer(&flags.log_every, int64_t{1})},
      {"shuffle-buffer", integer(&flags.shuffle_buffer, int64_t{1})},
      {"loader-threads", integer(&flags.loader_threads, 0)},
      {"torch-threads", integer(&flags.torch_threads, 1)},
      {"seed", integer(&flags.seed, uint64_t{0})},
      {"optimizer", text(&flags.optimizer)},
      {"lr", real(&flags.learning_rate)},
      {"weight-decay", real(&flags.weight_decay)},
      {"blocks", integer(&flags.blocks, 1)},
      {"filters", integer(&flags.filters, 1)},
      {"channels", integer(&flags.channels, 1)},
      {"classes", integer(&flags.classes, int64_t{1})},
      {"checkpoint", text(&flags.checkpoint)},
      {"checkpoint-every", integer(&flags.checkpoint_every, int64_t{1})},
      {"resume", text(&flags.resume)},
      {"report", text(&flags.report)},
  };
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      flags.help = true;
      continue;
    }
    if (arg == "--deterministic") {
      flags.deterministic = true;
      continue;
    }
    if (arg.substr(0, 2) != "--") {
      throw FlagError("unexpected argument '" + std::string(arg) +
                      "' (flags start with --; see --help)");
    }
    std::string_view name = arg.substr(2);
    std::string_view value;
    const size_t equals = name.find('=');
    const bool inline_value = equals != std::string_view::npos;
    if (inline_value) {
      value = name.substr(equals + 1);
      name = name.substr(0, equals);
    }
    const auto setter = valued.find(name);
    if (setter == valued.end()) {
      throw FlagError("unknown flag --" + std::string(name) + " (see --help)");
    }
    if (!inline_value) {
      if (i + 1 >= argc) {
        throw FlagError("--" + std::string(name) + " needs a value");
      }
      value = argv[++i];
    }
    if (value.empty()) {
      throw FlagError("--" + std::string(name) + " needs a value");
    }
    try {
      setter->second(value);
    } catch (const FlagError& error) {
      throw FlagError("--" + std::string(name) + ": " + error.what());
    }
  }
  Finish(flags);
  return flags;
}

}  // namespace trainer
