#ifndef DITSERVE_CORE_ENGINE_JOB_QUEUE_H_
#define DITSERVE_CORE_ENGINE_JOB_QUEUE_H_

#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/engine/engine.h"
#include "core/engine/request_outcome.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::engine {

// One frozen config waiting for rank 0's rank loop.
struct Job {
  v1::InputConfig config;
  // Consulted at step boundaries; must outlive the job; may be null.
  RunObserver* observer = nullptr;
  // Called exactly once on the rank loop's thread with the outcome.
  std::function<void(const RequestOutcome&)> done;
  // Set by Push, for the queue stage.
  std::chrono::steady_clock::time_point enqueued;
};

// Bounded, thread-safe hand-over from the server's threads to rank 0's rank
// loop.
class JobQueue {
 public:
  explicit JobQueue(int capacity) : capacity_(capacity) {}

  // RESOURCE_EXHAUSTED when `capacity` jobs wait; UNAVAILABLE after Close.
  absl::Status Push(Job job);

  struct Popped {
    std::optional<Job> job;
    // Close was called and every job has been taken.
    bool closed = false;
  };
  // The oldest job, waiting at most `timeout` for one.
  Popped Pop(absl::Duration timeout);

  // Refuses further jobs; the rank loop serves those queued, then shuts the
  // group down with `reason`.
  void Close(const std::string& reason);
  std::string close_reason() const;

  // Removes and returns every queued job (to fail them when the group broke).
  std::vector<Job> TakeAll();

 private:
  const int capacity_;
  mutable absl::Mutex mutex_;
  std::deque<Job> jobs_ ABSL_GUARDED_BY(mutex_);
  bool closed_ ABSL_GUARDED_BY(mutex_) = false;
  std::string close_reason_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_JOB_QUEUE_H_
