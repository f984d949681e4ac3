#ifndef DITSERVE_SERVER_BEARER_AUTH_H_
#define DITSERVE_SERVER_BEARER_AUTH_H_

// Bearer tokens (--auth_token_file) for the gRPC services and the HTTP API:
// clients send `authorization: Bearer <token>` as gRPC metadata or an HTTP
// header. Errors never contain a token, so none reaches a log or a client.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace grpc {
class ServerContextBase;
}  // namespace grpc

namespace ditserve::server {

class BearerAuth {
 public:
  // No tokens: every call is let in.
  BearerAuth() = default;

  // One token per line of `path`; blank lines and lines starting with '#'
  // are skipped. INVALID_ARGUMENT naming the flag and the path when the file
  // cannot be read, holds no token, or a token is shorter than 16
  // characters or contains whitespace.
  static absl::StatusOr<BearerAuth> FromTokenFile(const std::string& path,
                                                  bool guard_health);

  bool enabled() const { return !tokens_.empty(); }
  // Whether health checks (gRPC health, GET /health) and server reflection
  // need a token too (--auth_health).
  bool guards_health() const { return enabled() && guard_health_; }

  // OK when auth is off or `authorization` is "Bearer <a known token>";
  // UNAUTHENTICATED otherwise.
  absl::Status Check(absl::string_view authorization) const;
  // Check() of the call's `authorization` metadata.
  absl::Status CheckCall(const grpc::ServerContextBase& context) const;

 private:
  std::vector<std::string> tokens_;
  bool guard_health_ = false;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_BEARER_AUTH_H_
