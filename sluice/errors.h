// The exceptions sluice's C++ API throws: ConfigError and PipelineError.
// They are defined with the engine (engine/errors.h), whose facade throws
// the same types; the installed package ships that file as this header.
#ifndef SLUICE_SLUICE_ERRORS_H_
#define SLUICE_SLUICE_ERRORS_H_

#include "engine/errors.h"

#endif  // SLUICE_SLUICE_ERRORS_H_
