#ifndef DITSERVE_SERVER_HEALTH_SERVICE_H_
#define DITSERVE_SERVER_HEALTH_SERVICE_H_

// grpc.health.v1.Health (Check and Watch), generated from Debian's grpc-proto
// health.proto so that server reflection can describe it. Knows the overall
// service "" and ditserve.v1.Generation, which always share one status.

#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/bearer_auth.h"

namespace ditserve::server {

class HealthService final : public grpc::health::v1::Health::CallbackService {
 public:
  using ServingStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

  // With `auth` guarding health (--auth_health), calls need a token.
  explicit HealthService(const BearerAuth* auth = nullptr);
  ~HealthService() override;

  // Sets the status of every known service and notifies watchers.
  void SetServing(bool serving);
  bool serving() const;

  // Ends every Watch stream so that the gRPC server can shut down.
  void Shutdown();

  grpc::ServerUnaryReactor* Check(
      grpc::CallbackServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request,
      grpc::health::v1::HealthCheckResponse* response) override;

  grpc::ServerWriteReactor<grpc::health::v1::HealthCheckResponse>* Watch(
      grpc::CallbackServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request) override;

 private:
  class Watcher;

  static bool IsKnown(const std::string& service);
  absl::Status Authorize(const grpc::CallbackServerContext& context) const;
  void Unregister(Watcher* watcher);

  const BearerAuth* const auth_;
  mutable absl::Mutex mu_;
  ServingStatus status_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  std::set<Watcher*> watchers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_HEALTH_SERVICE_H_
