#include "server/health_service.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/status_conversion.h"

namespace ditserve::server {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

// One Watch stream: writes the current status, then every change, until the
// client cancels or the server shuts down. At most one write is in flight;
// a change during a write is sent when the write completes.
class HealthService::Watcher
    : public grpc::ServerWriteReactor<HealthCheckResponse> {
 public:
  Watcher(HealthService* service, bool known)
      : service_(service), known_(known) {
    if (!known) {
      // The protocol asks to report SERVICE_UNKNOWN once and keep the stream
      // open, ignoring later changes.
      absl::MutexLock lock(&mu_);
      StartWriteLocked(HealthCheckResponse::SERVICE_UNKNOWN);
    }
  }

  void Push(ServingStatus status) {
    absl::MutexLock lock(&mu_);
    if (finished_ || !known_) return;
    if (writing_) {
      pending_ = status;
      has_pending_ = true;
      return;
    }
    StartWriteLocked(status);
  }

  void End(const grpc::Status& status) {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    finished_ = true;
    // Finish counts as a write: with one in flight, gRPC's one-write rule
    // makes it wait for OnWriteDone (a slow watcher at shutdown).
    if (writing_) {
      deferred_finish_ = status;
      return;
    }
    Finish(status);
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (deferred_finish_.has_value()) {
      Finish(*std::move(deferred_finish_));
      deferred_finish_.reset();
      return;
    }
    if (!ok || finished_) return;
    if (has_pending_) {
      has_pending_ = false;
      StartWriteLocked(pending_);
    }
  }

  void OnCancel() override { End(grpc::Status::CANCELLED); }

  void OnDone() override {
    service_->Unregister(this);
    delete this;
  }

 private:
  void StartWriteLocked(ServingStatus status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    response_.set_status(status);
    writing_ = true;
    StartWrite(&response_);
  }

  HealthService* const service_;
  absl::Mutex mu_;
  HealthCheckResponse response_ ABSL_GUARDED_BY(mu_);
  const bool known_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool has_pending_ ABSL_GUARDED_BY(mu_) = false;
  ServingStatus pending_ ABSL_GUARDED_BY(mu_);
  std::optional<grpc::Status> deferred_finish_ ABSL_GUARDED_BY(mu_);
};

HealthService::HealthService(const BearerAuth* auth)
    : auth_(auth), status_(HealthCheckResponse::NOT_SERVING) {}

absl::Status HealthService::Authorize(
    const grpc::CallbackServerContext& context) const {
  if (auth_ == nullptr || !auth_->guards_health()) return absl::OkStatus();
  return auth_->AuthenticateCall(context).status();
}

HealthService::~HealthService() { Shutdown(); }

bool HealthService::IsKnown(const std::string& service) {
  return service.empty() || service == "ditserve.v1.Generation";
}

void HealthService::SetServing(bool serving) {
  const ServingStatus status =
      serving ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING;
  absl::MutexLock lock(&mu_);
  if (status == status_) return;
  status_ = status;
  for (Watcher* watcher : watchers_) watcher->Push(status);
}

bool HealthService::serving() const {
  absl::MutexLock lock(&mu_);
  return status_ == HealthCheckResponse::SERVING;
}

void HealthService::Shutdown() {
  absl::MutexLock lock(&mu_);
  shut_down_ = true;
  for (Watcher* watcher : watchers_) {
    watcher->End(
        grpc::Status(grpc::StatusCode::UNAVAILABLE, "server is shutting down"));
  }
}

void HealthService::Unregister(Watcher* watcher) {
  absl::MutexLock lock(&mu_);
  watchers_.erase(watcher);
}

grpc::ServerUnaryReactor* HealthService::Check(
    grpc::CallbackServerContext* context, const HealthCheckRequest* request,
    HealthCheckResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (absl::Status allowed = Authorize(*context); !allowed.ok()) {
    reactor->Finish(ToGrpcStatus(allowed));
    return reactor;
  }
  if (!IsKnown(request->service())) {
    reactor->Finish(grpc::Status(
        grpc::StatusCode::NOT_FOUND,
        absl::StrCat("unknown service \"", request->service(),
                     "\"; known: \"\" and \"ditserve.v1.Generation\"")));
    return reactor;
  }
  {
    absl::MutexLock lock(&mu_);
    response->set_status(status_);
  }
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerWriteReactor<HealthCheckResponse>* HealthService::Watch(
    grpc::CallbackServerContext* context, const HealthCheckRequest* request) {
  const absl::Status allowed = Authorize(*context);
  // An unknown service is answered SERVICE_UNKNOWN at once, so a refused
  // watcher is made as a known one that ends before its first write.
  const bool known = !allowed.ok() || IsKnown(request->service());
  auto* watcher = new Watcher(this, known);
  absl::MutexLock lock(&mu_);
  watchers_.insert(watcher);
  if (!allowed.ok()) {
    watcher->End(ToGrpcStatus(allowed));
  } else if (shut_down_) {
    watcher->End(
        grpc::Status(grpc::StatusCode::UNAVAILABLE, "server is shutting down"));
  } else if (known) {
    watcher->Push(status_);
  }
  return watcher;
}

}  // namespace ditserve::server
