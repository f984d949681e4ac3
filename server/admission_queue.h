#ifndef DITSERVE_SERVER_ADMISSION_QUEUE_H_
#define DITSERVE_SERVER_ADMISSION_QUEUE_H_

// Bounded queue between the RPC handlers and the scheduler thread: higher
// InputConfig.priority first; among equal priorities the clients (Job::client)
// take turns by the work of their jobs (RunWork), each client's jobs in
// arrival order.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/base/steady_wait.h"
#include "server/job.h"

namespace ditserve::server {

// The work of a job's run, by which clients take turns: the floating-point
// operations of one transformer block (every model's blocks are alike, so
// their count is left out) of width `hidden_size` over every forward of the
// run (images × guidance branches × steps of its frozen config). Per token
// of a sequence of T, a block's projections and MLP take 24 × hidden_size²
// and its attention 4 × hidden_size × T: attention grows with the square of
// the sequence, a fifth of FLUX.1's work at 1024² and half of
// CogVideoX-5b's at 49 frames of 720×480. At least 1, so that every job is a
// turn. It leaves out the VAE decode (under a percent of a 28-step FLUX.1
// run at 1024², more of a CogVideoX run) and PixArt's cross-attention to
// the caption.
double RunWork(const v1::InputConfig& config, int64_t hidden_size);

class AdmissionQueue {
 public:
  // `max_queued_per_client` bounds the jobs one client (Job::client; every
  // job without a named token counts as one client) may have waiting, so
  // that a client that floods the queue does not fill it for the others;
  // 0: no bound. `on_depth_change` is called with the new depth after every
  // change.
  // `hidden_size`: the served transformer's width, for RunWork.
  AdmissionQueue(int capacity, int max_queued_per_client, int64_t hidden_size,
                 std::function<void(int)> on_depth_change);

  // Admits `job` and returns the number of jobs ahead of it (jobs of a
  // higher priority admitted later go ahead of it too, and of its priority
  // another client's whose turn comes first: a client whose jobs ahead are
  // less work).
  // RESOURCE_EXHAUSTED when `capacity` jobs wait, or `max_queued_per_client`
  // of its client's; UNAVAILABLE when draining; the Pause status while
  // paused.
  // `on_admitted(position)` runs before the job can be popped, so whatever it
  // sends the client precedes the job's progress.
  absl::StatusOr<int> Push(
      std::shared_ptr<Job> job,
      const std::function<void(int position)>& on_admitted = nullptr);

  // Takes `job` out of the queue; false if it is not queued (running,
  // finished or never admitted).
  bool Remove(const std::shared_ptr<Job>& job);

  // The first job that still wants to run, waiting up to `timeout`; nullptr
  // on timeout. Jobs cancelled or past their deadline while queued are
  // finished here (CANCELLED / DEADLINE_EXCEEDED) and skipped.
  std::shared_ptr<Job> Pop(absl::Duration timeout);

  // Takes out, in queue order, the queued jobs that still want to run and
  // for which `joins` (called in that order, under the queue's lock) returns
  // true; the others keep their places.
  std::vector<std::shared_ptr<Job>> TakeMatching(
      const std::function<bool(const Job&)>& joins);

  // Takes out the jobs that have waited longer than `limit` (on the monotonic
  // clock, as Job::enqueued is) and finishes them RESOURCE_EXHAUSTED naming
  // --max_queue_wait_s: an overloaded host answers at once what it could only
  // answer late, and the client may retry elsewhere. A job whose client
  // cancelled or whose deadline passed is answered as such instead. Returns how
  // many were refused for overload.
  int ExpireWaiting(absl::Duration limit);

  // Takes out every queued job and finishes it with `why` (those cancelled
  // or past their deadline with their own reason, as Pop does). Returns how
  // many it finished with `why`.
  int FinishQueued(const absl::Status& why);

  // Refuses new jobs from now on; queued jobs still run.
  void StartDraining();
  // Refuses new jobs with `why` until Resume (the rank group re-forms).
  void Pause(absl::Status why);
  void Resume();
  int depth() const;

 private:
  bool HasJobsLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Where `job` goes in the queue.
  std::deque<std::shared_ptr<Job>>::iterator PlaceFor(const Job& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void NotifyDepthLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int capacity_;
  const int max_queued_per_client_;
  const int64_t hidden_size_;
  const std::function<void(int)> on_depth_change_;
  mutable absl::Mutex mu_;
  // Signalled when a job joins the queue.
  base::SteadyCondVar job_added_;
  std::deque<std::shared_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  // OK unless paused.
  absl::Status paused_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_ADMISSION_QUEUE_H_
