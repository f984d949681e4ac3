#include "server/scheduler.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/engine/stage.h"
#include "server/status_conversion.h"
#include "spdlog/spdlog.h"

namespace ditserve::server {
namespace {

constexpr absl::Duration kPollInterval = absl::Milliseconds(100);

void AddTiming(v1::GenerateResponse& response, engine::Stage stage,
               absl::Duration duration) {
  v1::StageTiming* timing = response.add_timings();
  timing->set_stage(std::string(engine::StageName(stage)));
  timing->set_seconds(absl::ToDoubleSeconds(duration));
  timing->set_rank(0);
}

}  // namespace

Scheduler::Scheduler(AdmissionQueue* queue, Executor* executor,
                     Metrics* metrics)
    : queue_(queue), executor_(executor), metrics_(metrics) {}

Scheduler::~Scheduler() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void Scheduler::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Scheduler::Drain(absl::Duration timeout) {
  queue_->StartDraining();
  const absl::Time give_up = absl::Now() + timeout;
  while (absl::Now() < give_up && (queue_->depth() > 0 || running_.load())) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  while (std::shared_ptr<Job> job = queue_->Pop(absl::ZeroDuration())) {
    job->Finish(absl::UnavailableError(
        "server shut down before the request could run"));
  }
}

void Scheduler::Loop() {
  while (!stop_.load()) {
    std::shared_ptr<Job> job = queue_->Pop(kPollInterval);
    if (job != nullptr) RunOne(job);
  }
}

void Scheduler::RunOne(const std::shared_ptr<Job>& job) {
  const v1::InputConfig& config = job->config();
  const absl::Time started = absl::Now();
  running_.store(true);
  metrics_->SetRequestsRunning(1);
  spdlog::info("request_id={} sequence={} run started after {} queued",
               config.request_id(), config.sequence_number(),
               absl::FormatDuration(started - job->enqueued()));

  absl::Time last_step = started;
  const Executor::StepFn on_step = [&](int step, int total_steps) {
    const absl::Time now = absl::Now();
    metrics_->ObserveDenoiseStep(absl::ToDoubleSeconds(now - last_step));
    last_step = now;
    v1::GenerateStreamResponse::Progress progress;
    progress.set_step(step);
    progress.set_total_steps(total_steps);
    progress.set_elapsed_seconds(absl::ToDoubleSeconds(now - started));
    job->ReportProgress(progress);
    if (job->cancelled()) return v1::STEP_DECISION_CANCEL;
    if (now >= job->deadline()) return v1::STEP_DECISION_DEADLINE;
    return v1::STEP_DECISION_CONTINUE;
  };
  absl::StatusOr<v1::GenerateResponse> outcome =
      executor_->Execute(config, on_step);

  running_.store(false);
  metrics_->SetRequestsRunning(0);
  const absl::Time finished = absl::Now();
  if (outcome.ok()) {
    AddTiming(*outcome, engine::Stage::kFreeze,
              job->enqueued() - job->received());
    AddTiming(*outcome, engine::Stage::kQueue, started - job->enqueued());
    AddTiming(*outcome, engine::Stage::kTotal, finished - job->received());
    *outcome->mutable_config() = config;
    for (const v1::StageTiming& timing : outcome->timings()) {
      if (timing.rank() == 0) {
        metrics_->ObserveStage(timing.stage(), timing.seconds());
      }
      metrics_->ObserveRankStage(timing.rank(), timing.stage(),
                                 timing.seconds());
    }
  }
  const absl::StatusCode code = outcome.status().code();
  spdlog::info("request_id={} sequence={} finished status={} in {}",
               config.request_id(), config.sequence_number(), StatusLabel(code),
               absl::FormatDuration(finished - started));
  job->Finish(std::move(outcome));
}

}  // namespace ditserve::server
