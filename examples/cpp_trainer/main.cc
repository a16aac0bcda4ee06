// cpp_trainer: trains a libtorch model on sluice batches. lc0: a small
// residual network with lc0's policy, value and moves-left heads; audio: a
// CNN over log-mel spectrograms, then one eval pass. See --help and
// README.md.
//
//   cpp_trainer --workload audio --data TRAIN --eval-data HELD
#include "trainer_main.h"

int main(int argc, char** argv) { return trainer::RunCppTrainer(argc, argv); }
