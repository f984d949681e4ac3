#ifndef DITSERVE_SERVER_BEARER_AUTH_H_
#define DITSERVE_SERVER_BEARER_AUTH_H_

// Bearer tokens (--auth_token_file) for the gRPC services and the HTTP API:
// clients send `authorization: Bearer <token>` as gRPC metadata or an HTTP
// header. Errors never contain a token, so none reaches a log or a client.

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace grpc {
class ServerContextBase;
}  // namespace grpc

namespace ditserve::server {

class BearerAuth {
 public:
  // No tokens: every call is let in.
  BearerAuth() = default;
  BearerAuth(const BearerAuth&) = delete;
  BearerAuth& operator=(const BearerAuth&) = delete;

  // One token per line of `path`; blank lines and lines starting with '#'
  // are skipped. INVALID_ARGUMENT naming the flag and the path when the file
  // cannot be read, holds no token, or a token is shorter than 16
  // characters or contains whitespace.
  static absl::StatusOr<std::unique_ptr<BearerAuth>> FromTokenFile(
      const std::string& path, bool guard_health);

  bool enabled() const { return !path_.empty(); }
  // Whether health checks (gRPC health, GET /health) and server reflection
  // need a token too (--auth_health).
  bool guards_health() const { return enabled() && guard_health_; }

  // Re-reads the token file, so that tokens rotate without a restart: its
  // tokens replace the current ones when it passes FromTokenFile's checks
  // (true when they differ); otherwise the current ones stay and the error
  // says why.
  absl::StatusOr<bool> Reload();

  // OK when auth is off or `authorization` is "Bearer <a known token>";
  // UNAUTHENTICATED otherwise.
  absl::Status Check(absl::string_view authorization) const;
  // Check() of the call's `authorization` metadata.
  absl::Status CheckCall(const grpc::ServerContextBase& context) const;

 private:
  std::string path_;
  bool guard_health_ = false;
  mutable absl::Mutex mu_;
  std::vector<std::string> tokens_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_BEARER_AUTH_H_
