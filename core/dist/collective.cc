#include "core/dist/collective.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/guarded.h"

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

bool IsPointToPoint(c10d::Work& work) {
  return dynamic_cast<c10d::ProcessGroupGloo::SendWork*>(&work) != nullptr ||
         dynamic_cast<c10d::ProcessGroupGloo::RecvWork*>(&work) != nullptr;
}

// Waits for `work` at most `timeout`; returns the ranks `watchdog` found
// hung if it gave up on them first, else nothing (Work::wait's exceptions
// propagate).
std::vector<int> WaitUnlessHung(c10d::Work& work,
                                std::chrono::milliseconds timeout,
                                Watchdog& watchdog) {
  if (IsPointToPoint(work)) {
    // A timed-out point-to-point wait tears down Gloo's pairs, so it is
    // never sliced: the watchdog's monitor aborts it instead.
    const int64_t id = watchdog.AbortOnHang([&work] { work.abort(); });
    absl::Cleanup remove = [&] { watchdog.RemoveAbortOnHang(id); };
    if (work.wait(timeout)) return {};
    std::vector<int> hung = watchdog.HungRanks();
    if (hung.empty()) {
      throw std::runtime_error(
          "the watchdog aborted the wait for a rank that has since answered");
    }
    return hung;
  }
  if (dynamic_cast<c10d::ProcessGroupGloo::AsyncWork*>(&work) == nullptr) {
    work.wait(timeout);
    return {};
  }
  // A Gloo collective can be waited for in slices: a slice that ends before
  // the work completes leaves it running.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    try {
      work.wait(std::max(std::chrono::milliseconds(1),
                         std::min(left, watchdog.options().interval)));
      return {};
    } catch (const std::exception&) {
      if (work.isCompleted() || std::chrono::steady_clock::now() >= deadline) {
        throw;
      }
    }
    if (std::vector<int> hung = watchdog.HungRanks(); !hung.empty()) {
      return hung;
    }
  }
}

}  // namespace

std::string RankList(const std::vector<int>& ranks) {
  return absl::StrCat(ranks.size() == 1 ? "rank " : "ranks ",
                      absl::StrJoin(ranks, ", "));
}

absl::Status RunCollective(
    absl::string_view operation, const CollectiveContext& context,
    const std::function<c10::intrusive_ptr<c10d::Work>()>& start) {
  std::string cause;
  try {
    c10::intrusive_ptr<c10d::Work> work = start();
    if (context.watchdog == nullptr) {
      work->wait(context.timeout);
      return absl::OkStatus();
    }
    const std::vector<int> hung =
        WaitUnlessHung(*work, context.timeout, *context.watchdog);
    if (hung.empty()) return absl::OkStatus();
    return absl::UnavailableError(absl::StrCat(
        RankList(hung), " stopped answering during ", operation, " on the ",
        context.group_name, " group: no heartbeat for ",
        context.watchdog->options().hung_after.count(), " ms"));
  } catch (...) {
    cause = DescribeCurrentException();
  }
  std::vector<int> lost;
  if (context.watchdog != nullptr) lost = context.watchdog->FindLostRanks();
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

}  // namespace ditserve::dist
