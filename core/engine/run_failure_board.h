#ifndef DITSERVE_CORE_ENGINE_RUN_FAILURE_BOARD_H_
#define DITSERVE_CORE_ENGINE_RUN_FAILURE_BOARD_H_

// Where a rank posts that its share of the run in progress failed, out of
// band in the generation's store, for two readers that cannot hear it
// otherwise (engine::RunDpGroup):
//   - rank 0, which reads it at every step boundary it decides and stops
//     every rank there: the boundary is its broadcast and carries nothing
//     back;
//   - the ranks of the failed rank's groups, whose waits in a collective it
//     will not join give up on it (dist::CollectiveContext::failed_peer)
//     instead of lasting until the collective timeout.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/dist/collective.h"

namespace ditserve::engine {

class RunFailureBoard {
 public:
  // `store`: the generation's, so that a re-formed group never reads a
  // retired one's posts; `rank`: this rank's.
  RunFailureBoard(c10::intrusive_ptr<c10d::Store> store, int rank);

  // This rank starts the group's next run (every rank starts the same
  // runs); the rest is about it from now on. Thread-safe, as all of these.
  void BeginNextRun();
  // Posts that this rank's share of the run failed with `failure`; returns
  // once the store holds it.
  absl::Status Post(const absl::Status& failure);
  // What a rank posted for the run ("rank 2: INTERNAL: ..."), or nullopt;
  // does not wait.
  absl::StatusOr<std::optional<std::string>> ReadAny() const;
  // What the first of `ranks` other than this one posted for the run, or
  // nullopt, also when the store cannot be read (the wait that asks then
  // lasts until its timeout, as it would without a board); does not wait.
  std::optional<std::string> FailedAmong(const std::vector<int>& ranks) const;
  // FailedAmong as a probe for collective contexts; empty for null.
  static dist::FailedRankProbe ProbeOf(const RunFailureBoard* board);

 private:
  const c10::intrusive_ptr<c10d::Store> store_;
  const int rank_;
  std::atomic<int64_t> run_{0};
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_RUN_FAILURE_BOARD_H_
