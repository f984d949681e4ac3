#include "server/request_intake.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/monotonic_clock.h"
#include "core/base/status_macros.h"
#include "core/config/field_error.h"
#include "core/config/freeze.h"
#include "server/bearer_auth.h"
#include "server/log_text.h"
#include "server/memory_admission.h"
#include "server/status_conversion.h"
#include "spdlog/spdlog.h"

namespace ditserve::server {

RequestIntake::RequestIntake(const ServedModel* model, AdmissionQueue* queue,
                             Metrics* metrics)
    : model_(model), queue_(queue), metrics_(metrics) {}

absl::StatusOr<v1::InputConfig> RequestIntake::Freeze(
    const v1::GenerateRequest& request, absl::Time deadline,
    absl::string_view header_request_id) {
  if (request.request_id().empty() && !header_request_id.empty()) {
    v1::GenerateRequest named = request;
    named.set_request_id(std::string(header_request_id));
    absl::StatusOr<v1::InputConfig> config = Freeze(named, deadline, {});
    const std::vector<std::string> fields =
        config.ok() ? std::vector<std::string>{}
                    : config::ErrorFields(config.status());
    if (fields.empty() || fields.front() != "request_id") return config;
    // A proxy's id the client never wrote: say where it came from.
    return config::WithFields(
        absl::Status(config.status().code(),
                     absl::StrCat(config.status().message(),
                                  " (taken from the ", kRequestIdHeader,
                                  " header, since request_id is empty)")),
        {"request_id"});
  }
  config::FreezeContext context;
  context.sequence_number = next_sequence_.fetch_add(1);
  context.generated_request_id = absl::StrCat("req-", context.sequence_number);
  {
    absl::MutexLock lock(&rng_mu_);
    // Below 2^63 so that a batch's consecutive seeds never wrap.
    context.drawn_seed = absl::Uniform<uint64_t>(rng_, 0, uint64_t{1} << 63);
  }
  context.deadline_unix_micros =
      deadline == absl::InfiniteFuture() ? 0 : absl::ToUnixMicros(deadline);
  ASSIGN_OR_RETURN(v1::InputConfig config,
                   config::Freeze(request, model_->spec, model_->options,
                                  model_->parallel, context));
  RETURN_IF_ERROR(CheckRequestMemory(config, *model_));
  return config;
}

void RequestIntake::CountUnadmitted(const absl::Status& status,
                                    const std::string& client) {
  metrics_->CountRequest(StatusLabel(status.code()), client);
  if (!status.ok()) {
    spdlog::info("refused{} status={} before admission: {}",
                 ClientLogField(client), StatusLabel(status.code()),
                 LogText(status.message()));
  }
}

void RequestIntake::CountUndeliveredStream(const std::string& reason) {
  metrics_->CountUndeliveredStream(reason);
}

std::shared_ptr<Job> RequestIntake::NewJob(
    v1::InputConfig config, std::string client, absl::Time received,
    Job::EventFn on_event, Job::DoneFn on_done,
    std::function<absl::Status(const v1::GenerateResponse&)> deliverable) {
  Metrics* metrics = metrics_;
  const std::string counted_client = client;
  return std::make_shared<Job>(
      std::move(config), std::move(client), received, base::MonotonicNow(),
      std::move(on_event),
      [metrics, counted_client, on_done = std::move(on_done),
       deliverable = std::move(deliverable)](
          absl::StatusOr<v1::GenerateResponse> outcome) {
        if (outcome.ok() && deliverable) {
          if (absl::Status refused = deliverable(*outcome); !refused.ok()) {
            outcome = std::move(refused);
          }
        }
        metrics->CountRequest(StatusLabel(outcome.status().code()),
                              counted_client);
        on_done(std::move(outcome));
      });
}

void RequestIntake::Enqueue(
    const std::shared_ptr<Job>& job,
    const std::function<void(int position)>& on_admitted) {
  absl::StatusOr<int> position = queue_->Push(job, on_admitted);
  const std::string client = ClientLogField(job->client());
  if (!position.ok()) {
    spdlog::info("request_id={} sequence={}{} refused status={}: {}",
                 job->config().request_id(), job->config().sequence_number(),
                 client, StatusLabel(position.status().code()),
                 LogText(position.status().message()));
    job->Finish(position.status());
    return;
  }
  spdlog::info("request_id={} sequence={}{} queued at position {}",
               job->config().request_id(), job->config().sequence_number(),
               client, *position);
}

void RequestIntake::Abandon(const std::shared_ptr<Job>& job) {
  job->Cancel();
  if (!queue_->Remove(job)) return;
  job->Finish(job->StopCode(absl::Now()) == absl::StatusCode::kDeadlineExceeded
                  ? absl::DeadlineExceededError("deadline passed")
                  : absl::CancelledError("cancelled by the client"));
}

}  // namespace ditserve::server
