#include "core/dist/rank_phase.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/base/guarded.h"
#include "core/base/monotonic_clock.h"
#include "core/base/status_macros.h"
#include "core/dist/collective.h"

namespace ditserve::dist {
namespace {

std::string OutcomeKey(const RankPhase& phase, int rank) {
  return absl::StrCat("phase/", phase.key, "/", rank);
}

// The outcomes ranks report in the store, read through one connection.
class Outcomes {
 public:
  Outcomes(c10d::Store& store, const RankPhase& phase)
      : store_(store),
        phase_(phase),
        reading_(absl::StrCat("waiting for every rank to finish ",
                              phase.description)) {}

  absl::Status Report(int rank, const absl::Status& outcome) {
    const std::string text = outcome.ok() ? "" : outcome.ToString();
    return base::GuardedAs(
        absl::StatusCode::kUnavailable,
        absl::StrCat("reporting the outcome of ", phase_.description), [&] {
          store_.set(OutcomeKey(phase_, rank),
                     std::vector<uint8_t>(text.begin(), text.end()));
        });
  }

  // Whether all of `ranks` reported: one store call, however many ranks.
  absl::StatusOr<bool> AllReported(const std::vector<int>& ranks) {
    std::vector<std::string> keys;
    for (int rank : ranks) keys.push_back(OutcomeKey(phase_, rank));
    return base::GuardedAs(absl::StatusCode::kUnavailable, reading_,
                           [&] { return store_.check(keys); });
  }

  // The ranks of `ranks` that have not reported.
  absl::StatusOr<std::vector<int>> Unreported(const std::vector<int>& ranks) {
    std::vector<int> unreported;
    for (int rank : ranks) {
      ASSIGN_OR_RETURN(const bool reported, AllReported({rank}));
      if (!reported) unreported.push_back(rank);
    }
    return unreported;
  }

  // OK, or UNAVAILABLE with the failure `rank` reported, which it did.
  absl::Status Outcome(int rank) {
    ASSIGN_OR_RETURN(
        const std::vector<uint8_t> failure,
        base::GuardedAs(absl::StatusCode::kUnavailable, reading_,
                        [&] { return store_.get(OutcomeKey(phase_, rank)); }));
    if (failure.empty()) return absl::OkStatus();
    return absl::UnavailableError(
        absl::StrCat("rank ", rank, " failed ", phase_.description, ": ",
                     std::string(failure.begin(), failure.end())));
  }

 private:
  c10d::Store& store_;
  const RankPhase& phase_;
  const std::string reading_;
};

// Not OK when the wait should end before every rank reported: why.
absl::Status ReasonToStopWaiting(Watchdog& watchdog, const RankPhase& phase,
                                 Outcomes& outcomes) {
  if (std::vector<int> hung = watchdog.HungRanks(); !hung.empty()) {
    return absl::UnavailableError(absl::StrCat(
        RankList(hung), " stopped answering while ", phase.description,
        ": no heartbeat for ", watchdog.options().hung_after.count(), " ms"));
  }
  if (std::optional<int64_t> newer = watchdog.SupersededBy()) {
    return absl::UnavailableError(absl::StrCat(
        "the wait for every rank to finish ", phase.description,
        " was left: rank 0 re-forms the group as generation ", *newer));
  }
  if (std::vector<int> exited = watchdog.ExitedRanks(); !exited.empty()) {
    // A rank that failed reports why before it leaves.
    for (int rank : exited) {
      ASSIGN_OR_RETURN(const bool reported, outcomes.AllReported({rank}));
      if (reported) RETURN_IF_ERROR(outcomes.Outcome(rank));
    }
    return absl::UnavailableError(
        absl::StrCat(RankList(exited), " left generation ",
                     watchdog.generation(), " while ", phase.description));
  }
  if (phase.keep_waiting) return phase.keep_waiting();
  return absl::OkStatus();
}

}  // namespace

absl::Status FinishRankPhase(Rendezvous& rendezvous, const RankPhase& phase,
                             const absl::Status& own) {
  const int self = rendezvous.env().rank;
  Outcomes outcomes(*rendezvous.store(), phase);
  const absl::Status reported = outcomes.Report(self, own);
  // This rank's own failure is what it reports on, whether or not the
  // others could be told.
  if (!own.ok()) return own;
  RETURN_IF_ERROR(reported);

  std::vector<int> others;
  for (int rank = 0; rank < rendezvous.env().world_size; ++rank) {
    if (rank != self) others.push_back(rank);
  }
  Watchdog& watchdog = rendezvous.watchdog();
  const absl::Time deadline =
      base::MonotonicNow() + absl::FromChrono(phase.timeout);
  // One store call per slice: the group serves within a tenth of a second
  // of the last rank's report, and a dozen waiting ranks do not load rank 0's
  // store.
  const absl::Duration slice = absl::Milliseconds(100);
  while (true) {
    ASSIGN_OR_RETURN(const bool all_reported, outcomes.AllReported(others));
    if (all_reported) {
      for (int rank : others) RETURN_IF_ERROR(outcomes.Outcome(rank));
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(ReasonToStopWaiting(watchdog, phase, outcomes));
    const absl::Time now = base::MonotonicNow();
    if (now >= deadline) {
      ASSIGN_OR_RETURN(const std::vector<int> late,
                       outcomes.Unreported(others));
      return absl::UnavailableError(absl::StrCat(
          RankList(late), " did not finish ", phase.description, " within ",
          phase.timeout.count() / 1000.0, " s (", phase.timeout_flag, ")"));
    }
    absl::SleepFor(std::min(slice, deadline - now));
  }
}

}  // namespace ditserve::dist
