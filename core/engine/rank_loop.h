#ifndef DITSERVE_CORE_ENGINE_RANK_LOOP_H_
#define DITSERVE_CORE_ENGINE_RANK_LOOP_H_

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dist/control_channel.h"
#include "core/engine/engine.h"
#include "core/engine/rank_report.h"
#include "core/engine/request_outcome.h"

namespace ditserve::engine {

struct RankLoopOptions {
  // Called on every rank after each run, once all ranks agreed on its
  // outcome. May be empty.
  std::function<void(const RequestOutcome&)> on_outcome;
  // Where the rank computes: the device current while the loop runs (CUDA's
  // is per thread, and rank 0 runs requests on a thread of the host's), and
  // whose memory its reports carry too.
  c10::Device device = c10::Device(c10::kCPU);
};

// The loop every rank runs over the control channel: receive a control
// message -> check the digest consensus -> Prepare (and agree that every rank
// prepared) -> Run -> all-gather every rank's report. Rank 0 drives it from
// the one thread that serves requests (RunOnAllRanks, Ping, Shutdown); the
// workers Follow it.
class RankLoop {
 public:
  RankLoop(dist::ControlChannel& channel, Engine& engine,
           RankLoopOptions options);

  // Rank 0. Each returns an error only when the group broke (a lost rank
  // names it) or a request failed in a collective, which re-forms it
  // (dist::IsCollectiveFailure); another failed request is the outcome's
  // status.
  //
  // Broadcasts `config`, then prepares, runs and reports it on every rank,
  // consulting `observer` (may be null) at every step boundary.
  absl::StatusOr<RequestOutcome> RunOnAllRanks(const v1::InputConfig& config,
                                               RunObserver* observer);
  // Tells idle workers that rank 0 lives; call more often than their control
  // channel timeout while no request runs.
  absl::Status Ping();
  // Ends every worker's Follow with OK, logging `reason`.
  absl::Status Shutdown(const std::string& reason);

  // Ranks > 0: follows rank 0's messages until it shuts the group down (OK)
  // or the group breaks (the error, naming the lost rank).
  absl::Status Follow();

 private:
  // Prepares, runs and reports one RunConfig on this rank. Returns an error
  // only when the group broke, or the request failed in a collective on any
  // rank; other request failures go into `outcome`.
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
