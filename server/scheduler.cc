#include "server/scheduler.h"

#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/base/monotonic_clock.h"
#include "core/base/status_macros.h"
#include "core/base/steady_wait.h"
#include "core/engine/stage.h"
#include "server/memory_admission.h"
#include "server/partial_image_decoder.h"
#include "server/request_batch.h"
#include "server/status_conversion.h"
#include "spdlog/spdlog.h"

namespace ditserve::server {

absl::Status ShutDownBeforeRunning() {
  return absl::UnavailableError(
      "server shut down before the request could run");
}

absl::Status GroupBrokenRefusal(const absl::Status& group_status) {
  return absl::UnavailableError(
      absl::StrCat("rank group broke: ", group_status.message(),
                   "; it is re-formed once every rank is back: retry in a "
                   "few seconds"));
}

namespace {

// How often the thread looks at the queue and the stop flag.
constexpr absl::Duration kPollInterval = absl::Milliseconds(100);

void AddTiming(v1::GenerateResponse& response, engine::Stage stage,
               absl::Duration duration) {
  v1::StageTiming* timing = response.add_timings();
  timing->set_stage(std::string(engine::StageName(stage)));
  timing->set_seconds(absl::ToDoubleSeconds(duration));
  timing->set_rank(0);
}

// Why `job` stops at `now`, if it does, `when` saying at what point of the
// run ("after step 3 of 8"). The deadline is looked at first: gRPC cancels a
// call when its deadline passes, so a job past its deadline is also
// cancelled, and must count as deadline_exceeded.
std::optional<absl::Status> StopReason(const Job& job, absl::Time now,
                                       absl::string_view when,
                                       bool drain_expired) {
  if (drain_expired) {
    return absl::UnavailableError(absl::StrCat(
        "server shutting down: its drain timeout (--drain_timeout_s) passed; "
        "stopped ",
        when));
  }
  const std::optional<absl::StatusCode> stop = job.StopCode(now);
  if (!stop.has_value()) return std::nullopt;
  if (*stop == absl::StatusCode::kDeadlineExceeded) {
    return absl::DeadlineExceededError(absl::StrCat("deadline passed ", when));
  }
  return absl::CancelledError(absl::StrCat("cancelled by the client ", when));
}

// The scheduler's step rule as the engine asks for it (0-based steps), and
// where the run's previews go.
class StepDecider : public engine::RunObserver {
 public:
  using DecideFn = std::function<v1::StepDecision(int step, int total_steps)>;
  using StartFn = std::function<void()>;
  StepDecider(PartialImageDecoder& previews, StartFn denoise_started,
              DecideFn decide)
      : denoise_started_(std::move(denoise_started)),
        decide_(std::move(decide)),
        previews_(previews) {}
  void OnDenoiseStarted() override { denoise_started_(); }
  v1::StepDecision DecideAfterStep(int step, int steps) override {
    return decide_(step + 1, steps);
  }
  void OnPartialLatents(int step, at::Tensor latents) override {
    previews_.Decode(step, std::move(latents));
  }

 private:
  const StartFn denoise_started_;
  const DecideFn decide_;
  PartialImageDecoder& previews_;
};

void AppendTimings(const engine::StageTimings& timings, int rank,
                   v1::GenerateResponse& response) {
  for (const engine::Stage stage : engine::kAllStages) {
    const double seconds = timings.seconds(stage);
    if (seconds <= 0.0) continue;
    v1::StageTiming* timing = response.add_timings();
    timing->set_stage(std::string(engine::StageName(stage)));
    timing->set_seconds(seconds);
    timing->set_rank(rank);
  }
}

// Pings the idle workers from a second thread while rank 0 alone works
// (decode, encode) after a run, so that a decode longer than the workers'
// control timeout does not look like a lost host. The run thread does not
// use the control channel meanwhile.
class KeepWorkersAlive {
 public:
  // Starts as the run ends, the workers' last message until the first ping.
  KeepWorkersAlive(engine::RankLoop& loop, absl::Duration interval)
      : last_message_(base::MonotonicNow()), thread_([this, &loop, interval] {
          while (!done_.WaitForNotificationWithTimeout(interval)) {
            const absl::Time sending = base::MonotonicNow();
            if (absl::Status ping = loop.Ping(); !ping.ok()) {
              status_ = ping;
              return;
            }
            last_message_ = sending;
          }
        }) {}
  ~KeepWorkersAlive() { Stop().IgnoreError(); }

  // Stops pinging; an error means the group broke meanwhile.
  absl::Status Stop() {
    if (thread_.joinable()) {
      done_.Notify();
      thread_.join();
    }
    return status_;
  }

  // When the workers last heard from rank 0, on the monotonic clock; read
  // after Stop.
  absl::Time last_message() const { return last_message_; }

 private:
  base::SteadyNotification done_;
  absl::Status status_;
  absl::Time last_message_;
  std::thread thread_;
};

}  // namespace

Scheduler::Scheduler(AdmissionQueue* queue, engine::RankLoop* loop,
                     OutputEncoder encode, Metrics* metrics,
                     const config::ModelSpec& spec, SchedulerOptions options)
    : queue_(queue),
      loop_(loop),
      encode_(std::move(encode)),
      metrics_(metrics),
      spec_(spec),
      options_(options) {}

Scheduler::~Scheduler() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void Scheduler::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Scheduler::Drain(absl::Duration timeout,
                      absl::FunctionRef<void()> while_waiting) {
  queue_->StartDraining();
  draining_.store(true);
  const absl::Time give_up = base::MonotonicNow() + timeout;
  while (base::MonotonicNow() < give_up && !group_broken_.HasBeenNotified() &&
         !drained_.HasBeenNotified()) {
    while_waiting();
    absl::SleepFor(absl::Milliseconds(20));
  }
  // Past the timeout the queued jobs are answered at once and the running
  // run stops after its current step, so that the host is gone before its
  // supervisor's kill (TimeoutStopSec, terminationGracePeriodSeconds), which
  // would leave its clients a reset connection instead of UNAVAILABLE.
  if (base::MonotonicNow() >= give_up) drain_expired_.store(true);
  queue_->FinishQueued(ShutDownBeforeRunning());
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

bool Scheduler::WaitForBrokenGroup(absl::Duration timeout) {
  return group_broken_.WaitForNotificationWithTimeout(timeout);
}

absl::Status Scheduler::group_status() const {
  absl::MutexLock lock(&mu_);
  return group_status_;
}

void Scheduler::Loop() {
  last_message_to_workers_ = base::MonotonicNow();
  while (!stop_.load()) {
    // Read before the pop: the queue refused new jobs before the flag was
    // set, so an empty pop after it means nothing is left to run. (Polling
    // the queue's depth instead missed a job popped but not yet running.)
    const bool draining = draining_.load();
    std::shared_ptr<Job> job = queue_->Pop(kPollInterval);
    absl::Status group;
    if (job != nullptr) {
      group = Run(Batch(std::move(job)));
    } else if (draining) {
      if (!drained_.HasBeenNotified()) drained_.Notify();
      continue;
    } else if (base::MonotonicNow() - last_message_to_workers_ >=
               options_.ping_interval) {
      const absl::Time sending = base::MonotonicNow();
      group = loop_->Ping();
      last_message_to_workers_ = sending;
    } else {
      continue;
    }
    if (!group.ok()) {
      FailGroup(group);
      return;
    }
  }
  if (absl::Status shutdown = loop_->Shutdown("host shutting down");
      !shutdown.ok()) {
    spdlog::error("shutting the rank group down failed: {}",
                  shutdown.ToString());
  }
}

void Scheduler::FailGroup(const absl::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    group_status_ = status;
  }
  queue_->Pause(GroupBrokenRefusal(status));
  group_broken_.Notify();
}

std::vector<std::shared_ptr<Job>> Scheduler::Batch(
    std::shared_ptr<Job> leader) {
  int images = leader->config().prompt_size();
  std::vector<std::shared_ptr<Job>> jobs = {std::move(leader)};
  const v1::InputConfig& first = jobs.front()->config();
  std::vector<const v1::InputConfig*> taken = {&first};
  for (std::shared_ptr<Job>& job :
       queue_->TakeMatching([&](const Job& candidate) {
         const int more = candidate.config().prompt_size();
         if (images + more > options_.max_batch ||
             !CanShareRun(first, candidate.config())) {
           return false;
         }
         taken.push_back(&candidate.config());
         const absl::StatusOr<v1::InputConfig> merged =
             MergeConfigs(taken, spec_);
         if (!merged.ok() ||
             !FitsRequestMemory(*merged, spec_, options_.max_request_bytes)) {
           taken.pop_back();
           return false;
         }
         images += more;
         return true;
       })) {
    jobs.push_back(std::move(job));
  }
  return jobs;
}

absl::Status Scheduler::Run(const std::vector<std::shared_ptr<Job>>& jobs) {
  std::vector<const v1::InputConfig*> configs;
  std::vector<int> prompt_counts;
  for (const std::shared_ptr<Job>& job : jobs) {
    configs.push_back(&job->config());
    prompt_counts.push_back(job->config().prompt_size());
  }
  absl::StatusOr<v1::InputConfig> merged =
      jobs.size() == 1 ? absl::StatusOr<v1::InputConfig>(jobs[0]->config())
                       : MergeConfigs(configs, spec_);
  if (!merged.ok()) {
    // Batch() only joins jobs that can share a run; should that ever fail,
    // each job still runs, alone.
    spdlog::error("request_id={} could not be batched: {}",
                  jobs[0]->config().request_id(), merged.status().ToString());
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (absl::Status group = Run({jobs[i]}); !group.ok()) {
        // Taken out of the queue, so no one else answers them.
        for (size_t later = i + 1; later < jobs.size(); ++later) {
          jobs[later]->Finish(GroupBrokenRefusal(group));
        }
        return group;
      }
    }
    return absl::OkStatus();
  }
  const v1::InputConfig& config = *merged;
  // Durations are on the monotonic clock, so that a wall-clock step does
  // not skew them; deadlines are wall-clock times, as gRPC gives them.
  const absl::Time started = base::MonotonicNow();
  metrics_->SetRequestsRunning(static_cast<int>(jobs.size()));
  metrics_->ObserveRunBatch(static_cast<int>(jobs.size()));
  spdlog::info(
      "request_id={} sequence={} run started after {} queued ({} requests, "
      "{} images)",
      config.request_id(), config.sequence_number(),
      absl::FormatDuration(started - jobs[0]->enqueued()), jobs.size(),
      config.prompt_size());

  absl::Time last_step = started;
  PartialImageDecoder previews(config, jobs, prompt_counts, encode_, *metrics_);
  const auto decide = [&](int step, int total_steps) {
    const absl::Time now = base::MonotonicNow();
    metrics_->ObserveDenoiseStep(absl::ToDoubleSeconds(now - last_step));
    last_step = now;
    v1::GenerateStreamResponse event;
    v1::GenerateStreamResponse::Progress& progress = *event.mutable_progress();
    progress.set_step(step);
    progress.set_total_steps(total_steps);
    progress.set_elapsed_seconds(absl::ToDoubleSeconds(now - started));
    // Each request that stops here gets its own reason; the run goes on while
    // any other request still wants its images.
    const bool drain_expired = drain_expired_.load();
    int live = 0;
    bool any_cancelled = false;
    for (const std::shared_ptr<Job>& job : jobs) {
      if (job->finished()) continue;
      job->ReportEvent(event);
      std::optional<absl::Status> reason =
          StopReason(*job, absl::Now(),
                     absl::StrCat("after step ", step, " of ", total_steps),
                     drain_expired);
      if (!reason.has_value()) {
        ++live;
        continue;
      }
      any_cancelled = any_cancelled || absl::IsCancelled(*reason);
      job->Finish(*std::move(reason));
    }
    metrics_->SetRequestsRunning(live);
    if (live > 0) return v1::STEP_DECISION_CONTINUE;
    if (drain_expired) return v1::STEP_DECISION_ABORT;
    return any_cancelled ? v1::STEP_DECISION_CANCEL
                         : v1::STEP_DECISION_DEADLINE;
  };
  StepDecider decider(
      previews, [&] { last_step = base::MonotonicNow(); }, decide);
  absl::StatusOr<engine::RequestOutcome> ran =
      loop_->RunOnAllRanks(config, &decider);
  absl::Status group = ran.status();
  const absl::StatusOr<v1::GenerateResponse> outcome =
      [&]() -> absl::StatusOr<v1::GenerateResponse> {
    // The group broke, whatever the failed wait's own code: a collective's
    // timeout is not the client's deadline.
    if (!group.ok()) return absl::UnavailableError(group.message());
    KeepWorkersAlive keep_alive(*loop_, options_.ping_interval);
    // Each request's previews come before its images.
    previews.Wait();
    absl::StatusOr<v1::GenerateResponse> response = Respond(config, *ran);
    group = keep_alive.Stop();
    last_message_to_workers_ = keep_alive.last_message();
    return response;
  }();
  previews.Wait();

  metrics_->SetRequestsRunning(0);
  const absl::Time finished = base::MonotonicNow();
  spdlog::info("request_id={} sequence={} finished status={} in {}",
               config.request_id(), config.sequence_number(),
               StatusLabel(outcome.status().code()),
               absl::FormatDuration(finished - started));
  absl::StatusOr<std::vector<v1::GenerateResponse>> responses =
      outcome.ok() ? SplitResponse(*outcome, prompt_counts)
                   : absl::StatusOr<std::vector<v1::GenerateResponse>>(
                         RunFailure(outcome.status(), jobs.size()));
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!responses.ok()) {
      jobs[i]->Finish(responses.status());
    } else {
      Answer(*jobs[i], std::move((*responses)[i]), started, finished);
    }
  }
  return group;
}

absl::StatusOr<v1::GenerateResponse> Scheduler::Respond(
    const v1::InputConfig& config, const engine::RequestOutcome& outcome) {
  for (size_t rank = 0; rank < outcome.rank_memory.size(); ++rank) {
    metrics_->SetRankMemory(static_cast<int>(rank), outcome.rank_memory[rank]);
  }
  RETURN_IF_ERROR(outcome.status);
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

void Scheduler::Answer(Job& job, v1::GenerateResponse response,
                       absl::Time started, absl::Time finished) {
  if (job.finished()) return;
  // A client that left, or whose deadline passed, while rank 0 decoded and
  // encoded never gets these outputs: it must not count as served.
  if (std::optional<absl::Status> reason =
          StopReason(job, absl::Now(),
                     "after the last step, while its outputs were decoded",
                     /*drain_expired=*/false)) {
    // The run's "finished" line said ok; this request's own outcome differs.
    spdlog::info("request_id={} sequence={} status={}: {}",
                 job.config().request_id(), job.config().sequence_number(),
                 StatusLabel(reason->code()), std::string(reason->message()));
    job.Finish(*std::move(reason));
    return;
  }
  AddTiming(response, engine::Stage::kFreeze, job.enqueued() - job.received());
  AddTiming(response, engine::Stage::kQueue, started - job.enqueued());
  AddTiming(response, engine::Stage::kTotal, finished - job.received());
  *response.mutable_config() = job.config();
  for (const v1::StageTiming& timing : response.timings()) {
    if (timing.rank() == 0) {
      metrics_->ObserveStage(timing.stage(), timing.seconds());
    }
    metrics_->ObserveRankStage(timing.rank(), timing.stage(), timing.seconds());
  }
  job.Finish(std::move(response));
}

}  // namespace ditserve::server
