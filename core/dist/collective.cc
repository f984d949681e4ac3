#include "core/dist/collective.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <vector>
#ifdef DITSERVE_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "core/base/guarded.h"
#include "core/base/monotonic_clock.h"
#include "core/base/status_macros.h"
#include "core/base/steady_wait.h"
#include "core/dist/collective_failure.h"

namespace ditserve::dist {
namespace {

// The text of whatever `start` or Work::wait threw.
std::string DescribeCurrentException() {
  try {
    throw;
  } catch (const std::exception& error) {
    return std::string(base::FirstLine(error));
  } catch (...) {
    return "unknown exception";
  }
}

// NCCL work runs on the communicator's CUDA stream. Waiting for it without a
// timeout only makes the current stream wait there, so the host goes on
// queueing kernels; with a timeout WorkNCCL::wait would block the host until
// the GPU finishes. A hung NCCL collective is ended by the communicator's
// own timeout (RendezvousOptions::collective_timeout) instead.
bool IsStreamOrdered([[maybe_unused]] c10d::Work& work) {
#ifdef DITSERVE_WITH_NCCL
  return dynamic_cast<c10d::ProcessGroupNCCL::WorkNCCL*>(&work) != nullptr;
#else
  return false;
#endif
}

bool IsPointToPoint(c10d::Work& work) {
  return dynamic_cast<c10d::ProcessGroupGloo::SendWork*>(&work) != nullptr ||
         dynamic_cast<c10d::ProcessGroupGloo::RecvWork*>(&work) != nullptr;
}

// Not OK when waits on `context`'s group should end before their timeout:
// UNAVAILABLE when a rank hung, left the generation or rank 0 opened a newer
// generation of the group, ABORTED when a rank that leaves the group on failure
// failed the run (the failure is its own, and the rank reports it).
absl::Status ReasonToGiveUp(absl::string_view operation,
                            const CollectiveContext& context) {
  Watchdog& watchdog = *context.watchdog;
  if (std::vector<int> hung = watchdog.HungRanks(); !hung.empty()) {
    return absl::UnavailableError(absl::StrCat(
        RankList(hung), " stopped answering during ", operation, " on the ",
        context.group_name, " group: no heartbeat for ",
        watchdog.options().hung_after.count(), " ms"));
  }
  if (std::optional<int64_t> newer = watchdog.SupersededBy()) {
    return absl::UnavailableError(
        absl::StrCat(operation, " on the ", context.group_name,
                     " group was left: rank 0 re-forms the group as "
                     "generation ",
                     *newer));
  }
  // A rank leaves after its own error or after seeing the group fail (a
  // survivor of a lost rank): either way it joins no more collectives of
  // this generation, although its sockets may stay open. A lost rank, if
  // any, is the cause to name.
  if (std::vector<int> exited = watchdog.ExitedRanks(); !exited.empty()) {
    const std::string left =
        absl::StrCat(RankList(exited), " left generation ",
                     watchdog.generation(), " of the group");
    if (std::vector<int> lost = watchdog.FindLostRanks(); !lost.empty()) {
      return absl::UnavailableError(
          absl::StrCat(RankList(lost), " lost during ", operation, " on the ",
                       context.group_name, " group (", left, ")"));
    }
    return absl::UnavailableError(absl::StrCat(
        left, " during ", operation, " on the ", context.group_name, " group"));
  }
  if (std::optional<std::string> failed =
          watchdog.FailedAmong(context.leave_on_failure)) {
    return absl::AbortedError(absl::StrCat(
        operation, " on the ", context.group_name,
        " group was left: a rank of the group failed its share of the run "
        "and will not join (",
        *failed, ")"));
  }
  return absl::OkStatus();
}

// Waits for `work` at most `timeout`; returns ReasonToGiveUp's status if it
// gave up first, else OK (Work::wait's exceptions propagate).
absl::Status WaitUnlessGivenUp(c10d::Work& work, absl::string_view operation,
                               const CollectiveContext& context) {
  Watchdog& watchdog = *context.watchdog;
  if (IsPointToPoint(work)) {
    // A timed-out point-to-point wait tears down Gloo's pairs, so it is
    // never sliced: the watchdog's monitor aborts it instead.
    const int64_t id = watchdog.AbortOnGiveUp([&work] { work.abort(); },
                                              context.leave_on_failure);
    absl::Cleanup remove = [&] { watchdog.RemoveAbortOnGiveUp(id); };
    if (work.wait(context.timeout)) return absl::OkStatus();
    absl::Status given_up = ReasonToGiveUp(operation, context);
    if (given_up.ok()) {
      throw std::runtime_error(
          "the watchdog aborted the wait for a rank that has since answered");
    }
    return given_up;
  }
  if (dynamic_cast<c10d::ProcessGroupGloo::AsyncWork*>(&work) == nullptr) {
    work.wait(context.timeout);
    return absl::OkStatus();
  }
  // A Gloo collective completes its future from Gloo's worker thread, so it
  // can be waited for in heartbeat-long slices without Work::wait's timeout
  // exception (a c10::Error with a backtrace) at the end of each slice.
  auto completed = std::make_shared<base::SteadyNotification>();
  work.getFuture()->addCallback(
      [completed](c10::ivalue::Future& /*future*/) { completed->Notify(); });
  const absl::Time deadline =
      base::MonotonicNow() + absl::FromChrono(context.timeout);
  const absl::Duration slice = absl::FromChrono(watchdog.options().interval);
  while (!completed->WaitForNotificationWithTimeout(
      std::min(slice, deadline - base::MonotonicNow()))) {
    if (base::MonotonicNow() >= deadline) {
      throw std::runtime_error(
          absl::StrCat("timed out after ", context.timeout.count(), " ms"));
    }
    // Completed since the slice ended: a rank's failure post, which may
    // follow its last part in the collective, is no reason to leave it.
    if (completed->HasBeenNotified()) break;
    if (absl::Status given_up = ReasonToGiveUp(operation, context);
        !given_up.ok()) {
      // Naming a lost rank takes a heartbeat window, in which a peer that
      // left after its last part in the collective lets it complete.
      if (completed->HasBeenNotified()) break;
      return given_up;
    }
  }
  // Completed: returns at once, or rethrows the collective's error.
  work.wait();
  return absl::OkStatus();
}

}  // namespace

std::string RankList(const std::vector<int>& ranks) {
  return absl::StrCat(ranks.size() == 1 ? "rank " : "ranks ",
                      absl::StrJoin(ranks, ", "));
}

namespace {

// The Status of a collective that threw `cause` while being issued or
// waited for.
absl::Status Failure(absl::string_view operation,
                     const CollectiveContext& context,
                     const std::string& cause) {
  std::vector<int> lost;
  if (context.watchdog != nullptr) {
    // The ranks that left a superseded generation close their connections.
    if (context.watchdog->SupersededBy().has_value()) {
      return ReasonToGiveUp(operation, context);
    }
    lost = context.watchdog->FindLostRanks();
  }
  if (!lost.empty()) {
    return absl::UnavailableError(
        absl::StrCat(RankList(lost), " lost during ", operation, " on the ",
                     context.group_name, " group: ", cause));
  }
  if (absl::StrContains(absl::AsciiStrToLower(cause), "timed out")) {
    return absl::DeadlineExceededError(
        absl::StrCat(operation, " on the ", context.group_name,
                     " group did not complete within ", context.timeout.count(),
                     " ms: ", cause));
  }
  return absl::InternalError(absl::StrCat(
      operation, " on the ", context.group_name, " group failed: ", cause));
}

}  // namespace

absl::StatusOr<c10::intrusive_ptr<c10d::Work>> StartCollective(
    absl::string_view operation, const CollectiveContext& context,
    const std::function<c10::intrusive_ptr<c10d::Work>()>& start) {
  try {
    return start();
  } catch (...) {
    return MarkCollectiveFailure(
        Failure(operation, context, DescribeCurrentException()));
  }
}

absl::Status WaitCollective(absl::string_view operation,
                            const CollectiveContext& context,
                            c10d::Work& work) {
  absl::Status status;
  try {
    if (IsStreamOrdered(work)) {
      work.wait();
    } else if (context.watchdog == nullptr) {
      work.wait(context.timeout);
    } else {
      status = WaitUnlessGivenUp(work, operation, context);
    }
  } catch (...) {
    status = Failure(operation, context, DescribeCurrentException());
  }
  return MarkCollectiveFailure(std::move(status));
}

absl::Status RunCollective(
    absl::string_view operation, const CollectiveContext& context,
    const std::function<c10::intrusive_ptr<c10d::Work>()>& start) {
  ASSIGN_OR_RETURN(c10::intrusive_ptr<c10d::Work> work,
                   StartCollective(operation, context, start));
  return WaitCollective(operation, context, *work);
}

}  // namespace ditserve::dist
