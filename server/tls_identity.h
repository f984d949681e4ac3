#ifndef DITSERVE_SERVER_TLS_IDENTITY_H_
#define DITSERVE_SERVER_TLS_IDENTITY_H_

// The TLS set (certificate chain, key, client CAs) the gRPC server and the
// HTTPS API serve with, replaced whole while they serve, so certificates
// rotate without a restart. gRPC re-reads it through its file watcher from
// in-memory files that only ever hold a checked set; each HTTPS handshake
// takes the set that is current when it starts.

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/tls_config.h"
#include "server/tls_material.h"

namespace grpc {
class ServerCredentials;
}  // namespace grpc

namespace ditserve::server {

class TlsIdentity {
 public:
  // INVALID_ARGUMENT when `material` does not parse (tls_material.h);
  // INTERNAL when no in-memory file can be made.
  static absl::StatusOr<std::unique_ptr<TlsIdentity>> Create(
      const TlsConfig& config, const TlsMaterial& material);
  ~TlsIdentity();
  TlsIdentity(const TlsIdentity&) = delete;
  TlsIdentity& operator=(const TlsIdentity&) = delete;

  const TlsConfig& config() const { return config_; }
  bool requires_client_certificate() const {
    return !config_.client_ca_path.empty();
  }
  TlsMaterial material() const;

  // Serves `material` from the next handshake on (gRPC: from its next
  // re-read); the current set stays when `material` does not parse.
  absl::Status Replace(const TlsMaterial& material);

  // Re-reads config()'s files and serves them when they changed and pass
  // the checks (true); false when they are as before; an error leaves the
  // current set serving.
  absl::StatusOr<bool> Reload();

  struct FilePaths {
    std::string cert_chain_path;
    std::string private_key_path;
    // Empty without a client CA.
    std::string client_ca_path;
  };
  // The in-memory files that hold the current set, which gRPC re-reads.
  FilePaths GrpcFiles() const;

  // gRPC server credentials that re-read GrpcFiles() every second: they
  // are in memory, so gRPC follows a Replace within a second at little cost.
  std::shared_ptr<grpc::ServerCredentials> GrpcCredentials() const;

  // Sets `context` (cpp-httplib's SSLServer) up to present the current set
  // at each handshake and, with a client CA, to require a client
  // certificate it signed. Keep this identity alive while `context` is.
  bool SetUpHttps(SSL_CTX& context) const;

 private:
  // An anonymous in-memory file (memfd) read through /proc/self/fd.
  class MemoryFile;

  TlsIdentity(const TlsConfig& config, std::unique_ptr<MemoryFile> cert_chain,
              std::unique_ptr<MemoryFile> private_key,
              std::unique_ptr<MemoryFile> client_ca);
  static int PresentCurrentSet(SSL* ssl, void* identity);
  std::shared_ptr<const ParsedTls> current() const;

  const TlsConfig config_;
  const std::unique_ptr<MemoryFile> cert_chain_;
  const std::unique_ptr<MemoryFile> private_key_;
  // Null without a client CA.
  const std::unique_ptr<MemoryFile> client_ca_;
  mutable absl::Mutex mu_;
  TlsMaterial material_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const ParsedTls> parsed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_TLS_IDENTITY_H_
