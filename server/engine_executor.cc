#include "server/engine_executor.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/base/status_macros.h"
#include "core/engine/engine.h"
#include "core/engine/stage.h"

namespace ditserve::server {
namespace {

// Forwards step decisions to the caller's StepFn until the caller stops
// waiting; after that the rank loop may still ask, and is told to abort.
class StepObserver : public engine::RunObserver {
 public:
  explicit StepObserver(Executor::StepFn on_step)
      : on_step_(std::move(on_step)) {}

  v1::StepDecision DecideAfterStep(int step, int steps) override {
    absl::MutexLock lock(&mu_);
    if (abandoned_) return v1::STEP_DECISION_ABORT;
    return on_step_ ? on_step_(step + 1, steps) : v1::STEP_DECISION_CONTINUE;
  }

  void Abandon() {
    absl::MutexLock lock(&mu_);
    abandoned_ = true;
  }

 private:
  absl::Mutex mu_;
  const Executor::StepFn on_step_;
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;
};

// Shared between the waiting caller and the rank loop's `done` callback,
// which may run after the caller gave up waiting.
struct PendingOutcome {
  absl::Notification ready;
  absl::Mutex mu;
  engine::RequestOutcome outcome ABSL_GUARDED_BY(mu);
};

// Rank 0's queue and total come from the host's scheduler, which sees the
// whole request; the engine's are its inner view.
bool HostMeasures(engine::Stage stage) {
  return stage == engine::Stage::kQueue || stage == engine::Stage::kFreeze ||
         stage == engine::Stage::kTotal;
}

void AppendTimings(const engine::StageTimings& timings, int rank,
                   v1::GenerateResponse& response) {
  for (const engine::Stage stage : engine::kAllStages) {
    const double seconds = timings.seconds(stage);
    if (seconds <= 0.0 || (rank == 0 && HostMeasures(stage))) continue;
    v1::StageTiming* timing = response.add_timings();
    timing->set_stage(std::string(engine::StageName(stage)));
    timing->set_seconds(seconds);
    timing->set_rank(rank);
  }
}

}  // namespace

EngineExecutor::EngineExecutor(engine::JobQueue* jobs, OutputEncoder encode,
                               absl::Duration max_run_time)
    : jobs_(jobs), encode_(std::move(encode)), max_run_time_(max_run_time) {}

absl::StatusOr<v1::GenerateResponse> EngineExecutor::Execute(
    const v1::InputConfig& config, const StepFn& on_step) {
  // The observer lives until the outcome arrives or the wait gives up; in
  // the latter case the rank loop may still consult it, so it is shared.
  auto observer = std::make_shared<StepObserver>(on_step);
  auto pending = std::make_shared<PendingOutcome>();
  engine::Job job;
  job.config = config;
  job.observer = observer.get();
  job.done = [pending, observer](const engine::RequestOutcome& outcome) {
    {
      absl::MutexLock lock(&pending->mu);
      pending->outcome = outcome;
    }
    pending->ready.Notify();
  };
  RETURN_IF_ERROR(jobs_->Push(std::move(job)));
  if (!pending->ready.WaitForNotificationWithTimeout(max_run_time_)) {
    observer->Abandon();
    return absl::DeadlineExceededError(absl::StrCat(
        "request ", config.request_id(), " produced no outcome within ",
        absl::FormatDuration(max_run_time_), " (--max_run_seconds)"));
  }
  engine::RequestOutcome outcome;
  {
    absl::MutexLock lock(&pending->mu);
    outcome = std::move(pending->outcome);
  }
  if (!outcome.status.ok()) return outcome.status;

  engine::StageTimings host_timings;
  ASSIGN_OR_RETURN(std::vector<v1::Image> images,
                   encode_(config, outcome.output, host_timings));

  v1::GenerateResponse response;
  for (v1::Image& image : images) *response.add_images() = std::move(image);
  for (size_t rank = 0; rank < outcome.rank_timings.size(); ++rank) {
    AppendTimings(outcome.rank_timings[rank], static_cast<int>(rank), response);
  }
  AppendTimings(host_timings, 0, response);
  return response;
}

}  // namespace ditserve::server
