#ifndef DITSERVE_SERVER_JOB_H_
#define DITSERVE_SERVER_JOB_H_

// One admitted request: its frozen config and the way back to its client.
// Shared by the RPC reactor that made it, the admission queue and the
// scheduler thread; whichever finishes it first wins, later attempts are
// ignored, so a cancelled job is answered exactly once.

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ditserve/v1/generation.pb.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::server {

class Job {
 public:
  // A streamed event before the outcome: progress or a partial image.
  using EventFn = std::function<void(v1::GenerateStreamResponse event)>;
  using DoneFn = std::function<void(absl::StatusOr<v1::GenerateResponse>)>;

  // `client`: the name of the caller's bearer token, kNoClient for none
  // (bearer_auth.h); `received`: when the RPC arrived; `enqueued`: when it
  // was frozen and admitted. Both are on the monotonic clock
  // (base::MonotonicNow), for durations: a wall-clock step would otherwise
  // refuse every queued job past --max_queue_wait_s at once, or none.
  Job(v1::InputConfig config, std::string client, absl::Time received,
      absl::Time enqueued, EventFn on_event, DoneFn on_done);

  const v1::InputConfig& config() const { return config_; }
  const std::string& client() const { return client_; }
  absl::Time received() const { return received_; }
  absl::Time enqueued() const { return enqueued_; }
  // absl::InfiniteFuture() when the request has no deadline.
  absl::Time deadline() const;
  // Why the job stops at `now`, if it does: DEADLINE_EXCEEDED once the
  // deadline passed, and for a cancel so close to it that the cancel is the
  // client's own deadline firing (gRPC sends the time left, so our copy of
  // the deadline runs behind the client's by the call's transit and our
  // receipt); CANCELLED for an earlier cancel. The margin only names a
  // cancel: a job nobody cancelled runs until the deadline itself.
  std::optional<absl::StatusCode> StopCode(absl::Time now) const;

  // The client went away; a queued job is dropped, a running one stops at
  // the next denoising step.
  void Cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }

  // Passes `event` on unless the job has finished (or reports none).
  void ReportEvent(v1::GenerateStreamResponse event);
  // Delivers the outcome once; returns false if the job was already finished.
  bool Finish(absl::StatusOr<v1::GenerateResponse> outcome);
  bool finished() const;

 private:
  const v1::InputConfig config_;
  const std::string client_;
  const absl::Time received_;
  const absl::Time enqueued_;
  const EventFn on_event_;
  std::atomic<bool> cancelled_{false};
  mutable absl::Mutex mu_;
  DoneFn on_done_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_JOB_H_
