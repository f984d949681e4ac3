#ifndef DITSERVE_SERVER_REQUEST_INTAKE_H_
#define DITSERVE_SERVER_REQUEST_INTAKE_H_

// The one way a request enters the host, whatever protocol carried it:
// freeze it (so bad input is refused before it is queued), count what is
// refused, admit the rest to the queue and count how each one ends.

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ditserve/v1/generation.pb.h"
#include "ditserve/v1/input_config.pb.h"
#include "server/admission_queue.h"
#include "server/job.h"
#include "server/metrics.h"
#include "server/served_model.h"

namespace ditserve::server {

// The header (HTTP) and metadata key (gRPC) whose value becomes a request's
// request_id when the request itself names none, so that the id a proxy
// such as Envoy gave the call is the one in ditserve's logs and response.
inline constexpr char kRequestIdHeader[] = "x-request-id";

class RequestIntake {
 public:
  RequestIntake(const ServedModel* model, AdmissionQueue* queue,
                Metrics* metrics);

  const ServedModel& model() const { return *model_; }

  // Freezes `request` with a fresh sequence number and seed, and refuses it
  // when its memory estimate is above the limit (memory_admission.h).
  // `deadline` is absl::InfiniteFuture() when the client set none.
  // `header_request_id` is the kRequestIdHeader value (empty when absent):
  // the id of a request that names none, checked as if the request had
  // named it; without either the request gets a fresh id.
  absl::StatusOr<v1::InputConfig> Freeze(const v1::GenerateRequest& request,
                                         absl::Time deadline,
                                         absl::string_view header_request_id);

  // Counts a request of `client` (Job::client; empty before or without
  // authentication) answered without being admitted: refused by Freeze, or
  // validate_only; logs a refusal with its reason.
  void CountUnadmitted(const absl::Status& status, const std::string& client);

  // A GenerateStream counted "ok" whose outputs did not all reach the client
  // (Metrics::CountUndeliveredStream).
  void CountUndeliveredStream(const std::string& reason);

  // A job for a frozen request of `client` (Job::client) whose outcome is
  // counted and then passed to `on_done`. `deliverable`, when set, says why
  // a response the run made cannot reach the client (Generate's message
  // limit); the job is then answered and counted with that error. Hand the
  // job to whatever may cancel it before Enqueue, so that a client leaving
  // in between is not missed.
  std::shared_ptr<Job> NewJob(
      v1::InputConfig config, std::string client, absl::Time received,
      Job::EventFn on_event, Job::DoneFn on_done,
      std::function<absl::Status(const v1::GenerateResponse&)> deliverable =
          nullptr);

  // Admits `job`; `on_admitted(position)` runs before it can start. A
  // refused job (queue full, draining) is finished at once.
  void Enqueue(const std::shared_ptr<Job>& job,
               const std::function<void(int position)>& on_admitted = nullptr);

  // The client went away: a queued job is answered CANCELLED (or
  // DEADLINE_EXCEEDED past its deadline) at once, a running one stops at
  // its next denoising step.
  void Abandon(const std::shared_ptr<Job>& job);

 private:
  const ServedModel* const model_;
  AdmissionQueue* const queue_;
  Metrics* const metrics_;
  std::atomic<uint64_t> next_sequence_{1};
  absl::Mutex rng_mu_;
  absl::BitGen rng_ ABSL_GUARDED_BY(rng_mu_);
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_REQUEST_INTAKE_H_
