#ifndef DITSERVE_CORE_PARALLEL_COLLECTIVE_ERROR_H_
#define DITSERVE_CORE_PARALLEL_COLLECTIVE_ERROR_H_

#include <stdexcept>
#include <utility>

#include "absl/status/status.h"

namespace ditserve::parallel {

// Thrown by the sequence-parallel Attention implementations, whose Attend
// returns a tensor and so cannot return a Status. It carries the Status of
// the failed collective (UNAVAILABLE naming a lost rank, DEADLINE_EXCEEDED,
// INTERNAL, or INVALID_ARGUMENT for shapes that cannot be split) so the
// module boundary that catches it keeps the code and the operation's name.
class CollectiveError : public std::runtime_error {
 public:
  explicit CollectiveError(absl::Status status)
      : std::runtime_error(status.ToString()), status_(std::move(status)) {}

  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
};

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_COLLECTIVE_ERROR_H_
