#ifndef DITSERVE_SERVER_SCHEDULER_H_
#define DITSERVE_SERVER_SCHEDULER_H_

// The host's one scheduler thread: takes admitted jobs in order, runs each on
// the rank group through the Executor, streams progress, answers the client
// and records metrics. One job runs at a time because every rank takes part
// in every job.

#include <atomic>
#include <thread>

#include "absl/time/time.h"
#include "server/admission_queue.h"
#include "server/executor.h"
#include "server/metrics.h"

namespace ditserve::server {

class Scheduler {
 public:
  Scheduler(AdmissionQueue* queue, Executor* executor, Metrics* metrics);
  ~Scheduler();

  void Start();
  // Returns once the queue is empty and the running job (if any) finished,
  // or `timeout` passed; then stops the thread. Jobs still queued after the
  // timeout are answered UNAVAILABLE.
  void Drain(absl::Duration timeout);

  bool running_job() const { return running_.load(); }

 private:
  void Loop();
  void RunOne(const std::shared_ptr<Job>& job);

  AdmissionQueue* const queue_;
  Executor* const executor_;
  Metrics* const metrics_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_SCHEDULER_H_
