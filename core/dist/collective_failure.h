#ifndef DITSERVE_CORE_DIST_COLLECTIVE_FAILURE_H_
#define DITSERVE_CORE_DIST_COLLECTIVE_FAILURE_H_

// A collective that failed may be left half done on its process group: Gloo
// closes the pairs of a wait that timed out, and a peer that arrives late
// meets the next operation instead of this one. Such a group cannot be
// trusted with another collective, so a request that failed in one re-forms
// the rank group (engine::RankLoop). The Status of a failed collective
// carries a mark saying so, which a rank report keeps across the wire.

#include "absl/status/status.h"

namespace ditserve::dist {

// Whether `status` is a failed collective's (or was, before a rank report
// carried it).
bool IsCollectiveFailure(const absl::Status& status);

// `status` with the mark IsCollectiveFailure reads; OK stays OK.
absl::Status MarkCollectiveFailure(absl::Status status);

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_COLLECTIVE_FAILURE_H_
