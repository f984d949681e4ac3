#ifndef DITSERVE_CORE_DIST_RANK_PHASE_H_
#define DITSERVE_CORE_DIST_RANK_PHASE_H_

#include <chrono>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "core/dist/rendezvous.h"

namespace ditserve::dist {

// A step every rank of a generation takes on its own, for as long as it
// needs, before the first collective that involves them all (loading the
// model: minutes from a cold disk, and longer on some ranks than others).
struct RankPhase {
  // Names the phase's keys in the generation's store.
  std::string key;
  // "loading the model", for messages.
  std::string description;
  // The longest wait for the slowest rank, and the flag that sets it.
  std::chrono::milliseconds timeout{0};
  std::string timeout_flag;
  // Asked between slices of the wait; a non-OK status ends it with that
  // status (the process is stopping). May be empty.
  std::function<absl::Status()> keep_waiting;
};

// Reports this rank's outcome of `phase` (`own`) to every rank of
// `rendezvous`'s generation and, when it is OK, waits for every other
// rank's: a collective issued by a rank that finished early would otherwise
// time out waiting for one still busy. Returns `own` when it is not OK.
// Otherwise UNAVAILABLE naming the ranks when a rank reported a failure,
// stopped beating (hung_after), left the generation, when rank 0 opened a
// newer generation, or when phase.timeout passed first; UNAVAILABLE too when
// the store cannot be reached; or phase.keep_waiting's status.
absl::Status FinishRankPhase(Rendezvous& rendezvous, const RankPhase& phase,
                             const absl::Status& own);

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_RANK_PHASE_H_
