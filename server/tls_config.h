#ifndef DITSERVE_SERVER_TLS_CONFIG_H_
#define DITSERVE_SERVER_TLS_CONFIG_H_

// TLS for the gRPC server and the HTTP API (--tls_cert, --tls_key and, for
// mutual TLS, --tls_client_ca). The metrics endpoint stays plaintext, as
// Prometheus scrapes usually are inside the cluster network.

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace ditserve::server {

struct TlsConfig {
  // PEM files.
  std::string cert_path;
  std::string key_path;
  // Empty: clients are not asked for a certificate.
  std::string client_ca_path;
};

// nullopt when no TLS flag is set. INVALID_ARGUMENT naming the flag when
// only one of cert and key is given, or a client CA comes without them. The
// files are read and checked by ReadTlsMaterial (tls_material.h).
absl::StatusOr<std::optional<TlsConfig>> MakeTlsConfig(
    const std::string& cert_path, const std::string& key_path,
    const std::string& client_ca_path);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_TLS_CONFIG_H_
