#ifndef DITSERVE_CORE_BASE_STATUS_ERROR_H_
#define DITSERVE_CORE_BASE_STATUS_ERROR_H_

#include <stdexcept>
#include <utility>

#include "absl/status/status.h"

namespace ditserve::base {

// Carries a Status through code that cannot return one (a module's forward,
// an Attention's Attend, which return tensors) up to the Guarded boundary,
// which returns it unchanged: a lost rank stays UNAVAILABLE naming the rank,
// a slow one DEADLINE_EXCEEDED, instead of becoming INTERNAL.
class StatusError : public std::runtime_error {
 public:
  explicit StatusError(absl::Status status)
      : std::runtime_error(status.ToString()), status_(std::move(status)) {}

  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
};

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_STATUS_ERROR_H_
