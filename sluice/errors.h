// The exceptions sluice's C++ API throws. Part of the public surface
// (installed); the engine's DataLoader facade throws the same types.
#ifndef SLUICE_SLUICE_ERRORS_H_
#define SLUICE_SLUICE_ERRORS_H_

#include <stdexcept>

namespace sluice {

// A configuration error, with a message naming the stage and the field.
class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A failure of the running pipeline (a stage threw, or I/O broke down),
// with the failing stage's message.
class PipelineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace sluice

#endif  // SLUICE_SLUICE_ERRORS_H_
