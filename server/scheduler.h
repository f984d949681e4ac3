#ifndef DITSERVE_SERVER_SCHEDULER_H_
#define DITSERVE_SERVER_SCHEDULER_H_

// The host's one scheduler thread: takes admitted jobs in order, runs them on
// the rank group through the Executor, streams progress, answers the clients
// and records metrics. One run at a time because every rank takes part in
// every run; a run takes the oldest job and, up to `max_batch` images in all,
// the queued jobs that can share its frozen config (request_batch.h).

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "core/config/model_spec.h"
#include "server/admission_queue.h"
#include "server/executor.h"
#include "server/metrics.h"

namespace ditserve::server {

class Scheduler {
 public:
  Scheduler(AdmissionQueue* queue, Executor* executor, Metrics* metrics,
            const config::ModelSpec& spec, int max_batch);
  ~Scheduler();

  void Start();
  // Returns once the queue is empty and the running job (if any) finished,
  // or `timeout` passed; then stops the thread. Jobs still queued after the
  // timeout are answered UNAVAILABLE.
  void Drain(absl::Duration timeout);

  bool running_job() const { return running_.load(); }

 private:
  void Loop();
  // The jobs that run with `leader`, leader first.
  std::vector<std::shared_ptr<Job>> Batch(std::shared_ptr<Job> leader);
  void Run(const std::vector<std::shared_ptr<Job>>& jobs);
  // Completes a successful `response` with the job's own config and timings,
  // records its metrics and answers the client.
  void Answer(Job& job, v1::GenerateResponse response, absl::Time started,
              absl::Time finished);

  AdmissionQueue* const queue_;
  Executor* const executor_;
  Metrics* const metrics_;
  const config::ModelSpec spec_;
  const int max_batch_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  std::thread thread_;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_SCHEDULER_H_
