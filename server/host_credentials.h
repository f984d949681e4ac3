#ifndef DITSERVE_SERVER_HOST_CREDENTIALS_H_
#define DITSERVE_SERVER_HOST_CREDENTIALS_H_

// What the host's flags say about TLS and bearer tokens, read and checked
// at start-up, in the forms the gRPC server, the HTTP API and the
// credential reloader take.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/bearer_auth.h"
#include "server/credential_reloader.h"
#include "server/tls_identity.h"

namespace grpc {
class ServerCredentials;
}  // namespace grpc

namespace ditserve::server {

struct HostCredentials {
  // Null without TLS.
  std::unique_ptr<TlsIdentity> tls;
  // Lets every call in without --auth_token_file.
  std::unique_ptr<BearerAuth> auth;
  // From `tls` (following its Replace), or insecure.
  std::shared_ptr<grpc::ServerCredentials> grpc;

  // The credentials that have files to re-read; a re-read that changes the
  // tokens adds their clients' series to `metrics` (Metrics::AddClients).
  std::vector<ReloadedCredential> Reloadable(Metrics* metrics) const;
  // For the start-up log, e.g. "TLS on, client certificates required,
  // bearer tokens required".
  std::string Describe() const;
};

// INVALID_ARGUMENT naming the flag and the file when the flags do not go
// together or a file fails its checks (tls_material.h, bearer_auth.h).
absl::StatusOr<HostCredentials> CredentialsFromFlags();

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_HOST_CREDENTIALS_H_
