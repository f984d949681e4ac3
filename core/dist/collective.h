#ifndef DITSERVE_CORE_DIST_COLLECTIVE_H_
#define DITSERVE_CORE_DIST_COLLECTIVE_H_

#include <chrono>
#include <functional>
#include <string>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dist/watchdog.h"

namespace ditserve::dist {

// How one group's collectives are waited for and explained.
struct CollectiveContext {
  // "control", "world", "sp", ... for messages.
  std::string group_name;
  std::chrono::milliseconds timeout{30000};
  // Names lost ranks after a failure and hung ones during the wait; may be
  // null (then no rank is named and only `timeout` ends a wait).
  Watchdog* watchdog = nullptr;
  // Ranks of the group that stop joining its collectives once they fail
  // their share of the run in progress: a dp group's own groups
  // (engine::RunDpGroup). A wait ends as soon as the watchdog reads such a
  // rank's post (Watchdog::FailedAmong) rather than at `timeout`. Empty for
  // groups a failed rank goes on joining (control, dp).
  std::vector<int> leave_on_failure;
};

// Issues one collective through `start` without waiting for it; errors as
// RunCollective's.
absl::StatusOr<c10::intrusive_ptr<c10d::Work>> StartCollective(
    absl::string_view operation, const CollectiveContext& context,
    const std::function<c10::intrusive_ptr<c10d::Work>()>& start);

// Waits for a started collective as RunCollective does. NCCL work is only
// ordered before the current CUDA stream's later kernels, without blocking
// the host or a timeout of this wait: the NCCL communicator's own timeout
// ends a hung collective.
absl::Status WaitCollective(absl::string_view operation,
                            const CollectiveContext& context, c10d::Work& work);

// Issues one collective through `start` and waits for it at most
// context.timeout, or until the watchdog finds a hung rank. Failures become
// a Status naming the operation and group: UNAVAILABLE naming the hung or
// lost rank(s) when the watchdog reports any, ABORTED naming the ranks of
// context.leave_on_failure that failed the run, DEADLINE_EXCEEDED for a
// timeout with every rank alive, INTERNAL otherwise.
absl::Status RunCollective(
    absl::string_view operation, const CollectiveContext& context,
    const std::function<c10::intrusive_ptr<c10d::Work>()>& start);

// "rank 2" or "ranks 1, 3".
std::string RankList(const std::vector<int>& ranks);

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_COLLECTIVE_H_
