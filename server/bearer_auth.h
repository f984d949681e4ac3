#ifndef DITSERVE_SERVER_BEARER_AUTH_H_
#define DITSERVE_SERVER_BEARER_AUTH_H_

// Bearer tokens (--auth_token_file) for the gRPC services and the HTTP API:
// clients send `authorization: Bearer <token>` as gRPC metadata or an HTTP
// header. A token may carry the name of its client, which the host's logs
// show and per-client limits count by. Errors never contain a token, so none
// reaches a log or a client.

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

// The client of a request without a named token (auth off, or a token the
// file names no client for).
inline constexpr char kNoClient[] = "";

// " client=NAME" for a host log line, empty for kNoClient. Names are
// [A-Za-z0-9._-] (FromTokenFile checks), so they are logged as they are.
std::string ClientLogField(absl::string_view client);

class BearerAuth {
 public:
  // No tokens: every call is let in.
  BearerAuth() = default;
  BearerAuth(const BearerAuth&) = delete;
  BearerAuth& operator=(const BearerAuth&) = delete;

  // One token per line of `path`, alone or after its client's name and
  // whitespace ("alice 8c3f…"); blank lines and lines starting with '#' are
  // skipped. Several tokens may name one client (its old and new token
  // during a rotation). INVALID_ARGUMENT naming the flag, the path and the
  // line when the file cannot be read, holds no token, a token is shorter
  // than 16 characters or given twice, a name is not 1 to 64 of
  // [A-Za-z0-9._-], or a line has more than two fields.
  static absl::StatusOr<std::unique_ptr<BearerAuth>> FromTokenFile(
      const std::string& path, bool guard_health);

  bool enabled() const { return !path_.empty(); }
  // For the start-up line: "off", or "required" with how many tokens the
  // file holds and the clients they name, so that an operator sees the file
  // read as meant.
  std::string Describe() const;
  // The clients the tokens name, sorted, each once.
  std::vector<std::string> ClientNames() const;
  // Whether health checks (gRPC health, GET /health) and server reflection
  // need a token too (--auth_health).
  bool guards_health() const { return enabled() && guard_health_; }

  // Re-reads the token file, so that tokens rotate without a restart: its
  // tokens replace the current ones when it passes FromTokenFile's checks
  // (true when they differ); otherwise the current ones stay and the error
  // says why.
  absl::StatusOr<bool> Reload();

  // The name of the client whose token `authorization` ("Bearer <token>")
  // carries: kNoClient when auth is off or the token has no name.
  // UNAUTHENTICATED for a missing or unknown token.
  absl::StatusOr<std::string> Authenticate(
      absl::string_view authorization) const;
  // Authenticate() of the call's `authorization` metadata.
  absl::StatusOr<std::string> AuthenticateCall(
      const grpc::ServerContextBase& context) const;

 private:
  std::string path_;
  bool guard_health_ = false;
  mutable absl::Mutex mu_;
  struct Token {
    std::string secret;
    // Empty when the file names no client.
    std::string client;
    bool operator==(const Token& other) const {
      return secret == other.secret && client == other.client;
    }
  };
  static absl::StatusOr<std::vector<Token>> ReadTokens(const std::string& path);

  std::vector<Token> tokens_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_BEARER_AUTH_H_
