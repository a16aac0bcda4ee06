// The exceptions sluice throws: the engine's DataLoader facade throws them,
// and the public C++ API (installed as <sluice/errors.h>) re-exports them,
// so a caller catches the same types whichever layer it uses.
#ifndef SLUICE_ENGINE_ERRORS_H_
#define SLUICE_ENGINE_ERRORS_H_

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

#endif  // SLUICE_ENGINE_ERRORS_H_
