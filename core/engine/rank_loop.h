#ifndef DITSERVE_CORE_ENGINE_RANK_LOOP_H_
#define DITSERVE_CORE_ENGINE_RANK_LOOP_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dist/control_channel.h"
#include "core/engine/engine.h"
#include "core/engine/job_queue.h"
#include "core/engine/rank_report.h"
#include "core/engine/request_outcome.h"

namespace ditserve::engine {

struct RankLoopOptions {
  // Rank 0 pings when no job arrived for this long; must be well below the
  // control channel's timeout, which idle workers wait under.
  std::chrono::milliseconds ping_interval{5000};
  // Called on every rank after each RunConfig, once all ranks agreed on its
  // outcome (on rank 0 before the job's own `done`). May be empty.
  std::function<void(const RequestOutcome&)> on_outcome;
};

// The loop every rank runs: receive a control message -> check the digest
// consensus -> Prepare (and agree that every rank prepared) -> Run ->
// all-gather every rank's report. Rank 0
// takes configs from a JobQueue, pings while idle and sends Shutdown once
// the queue is closed and empty; workers follow rank 0's messages.
class RankLoop {
 public:
  RankLoop(dist::ControlChannel& channel, Engine& engine,
           RankLoopOptions options);

  // Rank 0: serves `queue` (required) until it is closed. Workers: pass
  // nullptr. Returns OK after a clean shutdown, or the error that broke the
  // group (a lost rank names it); on rank 0 every job still queued then
  // completes with that error.
  absl::Status Run(JobQueue* queue);

 private:
  absl::Status RunHost(JobQueue& queue);
  absl::Status RunWorker();
  // Prepares, runs and reports one RunConfig on this rank. Returns an error
  // only when the group broke; request failures go into `outcome`.
  absl::Status Serve(const dist::ControlMessage& message, RunObserver* observer,
                     StageTimings& timings, RequestOutcome& outcome);

  // Every rank's `mine`, indexed by rank; an error means the group broke.
  absl::StatusOr<std::vector<RankReport>> GatherReports(
      absl::string_view operation, const RankReport& mine);

  dist::ControlChannel& channel_;
  Engine& engine_;
  RankLoopOptions options_;
  uint64_t ping_sequence_ = 0;
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_RANK_LOOP_H_
