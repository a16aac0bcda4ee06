// Status helpers that Debian's abseil 20220623 lacks.
//
//   SLUICE_RETURN_IF_ERROR(DoThing());
//   SLUICE_ASSIGN_OR_RETURN(auto value, ComputeValue());
#ifndef SLUICE_ENGINE_STATUS_MACROS_H_
#define SLUICE_ENGINE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns the status from the enclosing function when it is not OK.
#define SLUICE_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::absl::Status sluice_status_ = (expr);          \
    if (!sluice_status_.ok()) return sluice_status_; \
  } while (0)

#define SLUICE_STATUS_CONCAT_INNER(a, b) a##b
#define SLUICE_STATUS_CONCAT(a, b) SLUICE_STATUS_CONCAT_INNER(a, b)

// Evaluates a StatusOr expression; returns its status when not OK, else
// declares/assigns `lhs` from its value.
#define SLUICE_ASSIGN_OR_RETURN(lhs, expr)                                 \
  SLUICE_ASSIGN_OR_RETURN_IMPL(SLUICE_STATUS_CONCAT(sluice_or_, __LINE__), \
                               lhs, expr)

#define SLUICE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()

#endif  // SLUICE_ENGINE_STATUS_MACROS_H_
