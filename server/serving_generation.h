#ifndef DITSERVE_SERVER_SERVING_GENERATION_H_
#define DITSERVE_SERVER_SERVING_GENERATION_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/dist/group_store.h"
#include "core/engine/model_loading.h"
#include "core/engine/rank_runtime.h"
#include "core/engine/rank_setup.h"
#include "server/admission_queue.h"
#include "server/metrics.h"
#include "server/scheduler.h"

namespace ditserve::server {

// One formed generation of the rank group on rank 0: its runtime, rank 0's
// share of the model loaded over it, and the scheduler that runs admitted
// jobs on it. When a rank is lost the host abandons it and forms the next
// generation with the same queue and metrics (host_main.cc).
class ServingGeneration {
 public:
  // What outlives every generation.
  struct Shared {
    AdmissionQueue* queue;
    Metrics* metrics;
    SchedulerOptions scheduler;
  };

  // Joins `generation` of the group in `store` (waiting for the other ranks
  // while `keep_waiting` is OK; then every rank is alive in the metrics,
  // and only the host if a step after fails), marks it formed, loads the
  // model, waits (again while `keep_waiting` is OK) until every rank loaded
  // its share, and starts the scheduler.
  static absl::StatusOr<std::unique_ptr<ServingGeneration>> Form(
      const engine::RankSetup& setup, std::shared_ptr<dist::GroupStore> store,
      int64_t generation, const Shared& shared,
      std::function<absl::Status()> keep_waiting);
  ~ServingGeneration();

  int64_t generation() const { return runtime_->generation(); }
  Scheduler& scheduler() { return *scheduler_; }

  // After the group broke: how many ranks are still alive (this one
  // included; blocks for the watchdog's observation window). Then keeps the
  // broken groups from blocking this object's destruction
  // (RankRuntime::Abandon).
  int Abandon();

 private:
  ServingGeneration() = default;

  // Declared so that the scheduler stops first and the model, which the
  // runtime's engine runs, goes last.
  engine::LoadedModel model_;
  std::unique_ptr<engine::RankRuntime> runtime_;
  std::unique_ptr<Scheduler> scheduler_;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_SERVING_GENERATION_H_
