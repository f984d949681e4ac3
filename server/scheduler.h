#ifndef DITSERVE_SERVER_SCHEDULER_H_
#define DITSERVE_SERVER_SCHEDULER_H_

// The host's one run thread: takes admitted jobs in order and runs each on
// the rank group itself, through the rank loop (broadcast, prepare, run,
// gather on every rank), then decodes and encodes its images, answers the
// clients and records metrics; while idle it pings the workers. One run at a
// time because every rank takes part in every run; a run takes the oldest
// job and, up to `max_batch` images in all, the queued jobs that can share
// its frozen config (request_batch.h).

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/base/steady_wait.h"
#include "core/config/model_spec.h"
#include "core/engine/rank_loop.h"
#include "core/engine/request_outcome.h"
#include "server/admission_queue.h"
#include "server/image_output.h"
#include "server/metrics.h"

namespace ditserve::server {

struct SchedulerOptions {
  int max_batch = 1;
  // --max_request_bytes: a queued request joins a run only while the merged
  // run's estimate stays within it (0: no limit).
  int64_t max_request_bytes = 0;
  // Idle workers hear from rank 0 at least this often; must be well below
  // their control channel timeout.
  absl::Duration ping_interval = absl::Seconds(5);
};

// What a job still queued gets when the host stops before running it.
absl::Status ShutDownBeforeRunning();
// What a job gets while the group that broke with `group_status` re-forms:
// one admitted meanwhile, or one queued when a rank was lost.
absl::Status GroupBrokenRefusal(const absl::Status& group_status);

class Scheduler {
 public:
  // `loop`: rank 0's side of the rank loop, driven only by this scheduler's
  // thread.
  Scheduler(AdmissionQueue* queue, engine::RankLoop* loop, OutputEncoder encode,
            Metrics* metrics, const config::ModelSpec& spec,
            SchedulerOptions options);
  ~Scheduler();

  void Start();
  // Returns once the queue is empty and the running job (if any) finished,
  // or `timeout` passed; then shuts the group down and stops the thread.
  // Past the timeout, jobs still queued are answered UNAVAILABLE, and the
  // running ones too after the step they are in (STEP_DECISION_ABORT).
  // Calls `while_waiting` every few milliseconds until then: the jobs that
  // wait for the drain are still bound by the host's other limits
  // (--max_queue_wait_s).
  void Drain(absl::Duration timeout, absl::FunctionRef<void()> while_waiting);
  // True once the rank group broke (a rank was lost, or a request failed in
  // a collective); the thread has then failed the run in progress, if any
  // (UNAVAILABLE), paused
  // admission (AdmissionQueue::Pause, GroupBrokenRefusal) and ended, leaving
  // the queued jobs to the host. Waits at most `timeout` for that.
  bool WaitForBrokenGroup(absl::Duration timeout);
  // Why the group broke; OK while it serves.
  absl::Status group_status() const;

 private:
  void Loop();
  // The jobs that run with `leader`, leader first.
  std::vector<std::shared_ptr<Job>> Batch(std::shared_ptr<Job> leader);
  // Returns an error only when the group broke.
  absl::Status Run(const std::vector<std::shared_ptr<Job>>& jobs);
  // Every rank's timings and the images of a successful outcome.
  absl::StatusOr<v1::GenerateResponse> Respond(
      const v1::InputConfig& config, const engine::RequestOutcome& outcome);
  // Completes a successful `response` with the job's own config and timings,
  // records its metrics and answers the client; `started` and `finished`
  // (the run's) are on the monotonic clock, as the job's times are.
  void Answer(Job& job, v1::GenerateResponse response, absl::Time started,
              absl::Time finished);
  // Ends the thread's service after the group broke with `status`.
  void FailGroup(const absl::Status& status);

  AdmissionQueue* const queue_;
  engine::RankLoop* const loop_;
  const OutputEncoder encode_;
  Metrics* const metrics_;
  const config::ModelSpec spec_;
  const SchedulerOptions options_;
  std::atomic<bool> stop_{false};
  // When the idle workers last heard from rank 0 (monotonic clock), from
  // which the next ping is due: each waits a collective timeout at most.
  // Counted from when a run's answers were sent instead, a worker could hear
  // nothing for two ping intervals and then some, past the timeout when the
  // interval is the largest allowed (half of it). The scheduler's thread
  // alone uses it.
  absl::Time last_message_to_workers_;
  // Drain's timeout passed: the running run stops after its step.
  std::atomic<bool> drain_expired_{false};
  // Set by Drain once the queue refuses new jobs.
  std::atomic<bool> draining_{false};
  // The thread found the draining queue empty with no job in hand: every
  // admitted job has been answered.
  base::SteadyNotification drained_;
  base::SteadyNotification group_broken_;
  mutable absl::Mutex mu_;
  absl::Status group_status_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_SCHEDULER_H_
