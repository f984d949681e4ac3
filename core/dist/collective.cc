#include "core/dist/collective.h"

#include <exception>
#include <string>
#include <vector>

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
    work->wait(context.timeout);
    return absl::OkStatus();
  } catch (...) {
    cause = DescribeCurrentException();
  }
  std::vector<int> lost;
  if (context.find_lost_ranks) lost = context.find_lost_ranks();
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
