#ifndef DITSERVE_CORE_DIST_STORE_WAIT_H_
#define DITSERVE_CORE_DIST_STORE_WAIT_H_

#include <chrono>
#include <functional>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "absl/status/status.h"

namespace ditserve::dist {

// How long a rank waits in the store for the other ranks of a forming group,
// and when it stops early.
struct StoreWait {
  std::chrono::milliseconds timeout{60000};
  // Asked between slices of the wait; a non-OK status ends the wait with
  // that status (a newer generation was opened, the process is stopping).
  // May be empty.
  std::function<absl::Status()> keep_waiting;
};

// Waits until every key in `keys` exists in `store`. Errors: UNAVAILABLE
// "<what> did not arrive within N ms" after wait.timeout, the status of
// wait.keep_waiting when it turns non-OK, UNAVAILABLE with the store's own
// message when the store cannot be reached.
absl::Status WaitForKeys(c10d::Store& store,
                         const std::vector<std::string>& keys,
                         const StoreWait& wait, const std::string& what);

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_STORE_WAIT_H_
