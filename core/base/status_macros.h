#ifndef DITSERVE_CORE_BASE_STATUS_MACROS_H_
#define DITSERVE_CORE_BASE_STATUS_MACROS_H_

// Status propagation without the hand-written `if (!x.ok()) return` lines.
//
//   RETURN_IF_ERROR(WriteFile(path));
//   ASSIGN_OR_RETURN(const Config config, ReadConfig(path));
//   ASSIGN_OR_RETURN(auto model, Model::Load(dir));
//
// The macros return the callee's Status unchanged, so its code and message
// (which name the input, the value and what was expected) reach the caller.

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define RETURN_IF_ERROR(expr)                                               \
  do {                                                                      \
    if (::absl::Status ditserve_status_ = (expr); !ditserve_status_.ok()) { \
      return ditserve_status_;                                              \
    }                                                                       \
  } while (false)

#define DITSERVE_STATUS_CONCAT_INNER_(a, b) a##b
#define DITSERVE_STATUS_CONCAT_(a, b) DITSERVE_STATUS_CONCAT_INNER_(a, b)

#define ASSIGN_OR_RETURN(lhs, expr) \
  DITSERVE_ASSIGN_OR_RETURN_IMPL_(  \
      DITSERVE_STATUS_CONCAT_(ditserve_status_or_, __COUNTER__), lhs, expr)

#define DITSERVE_ASSIGN_OR_RETURN_IMPL_(status_or, lhs, expr) \
  auto status_or = (expr);                                    \
  if (!status_or.ok()) return std::move(status_or).status();  \
  lhs = *std::move(status_or)

#endif  // DITSERVE_CORE_BASE_STATUS_MACROS_H_
