// cpp_trainer's program: flags parsed, the loader started (resumed from
// --resume), the model and optimizer made or restored, --steps steps trained
// with checkpoints and reports, then the eval pass. It lives in trainer_core
// so that torch's headers are parsed once per build, not again for main.cc.
#pragma once

namespace trainer {

// Runs cpp_trainer with the command line's arguments and returns its exit
// status: 0 done or stopped by a signal, 1 a failed run, 2 bad flags, a bad
// pipeline or an unreadable checkpoint (with the reason on stderr).
int RunCppTrainer(int argc, char** argv);

}  // namespace trainer
