#include "server/tls_config.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::server {

absl::StatusOr<std::optional<TlsConfig>> MakeTlsConfig(
    const std::string& cert_path, const std::string& key_path,
    const std::string& client_ca_path) {
  if (cert_path.empty() && key_path.empty()) {
    if (!client_ca_path.empty()) {
      return absl::InvalidArgumentError(
          "--tls_client_ca needs --tls_cert and --tls_key: mutual TLS is "
          "TLS first");
    }
    return std::nullopt;
  }
  if (cert_path.empty() || key_path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_cert and --tls_key go together; only --",
                     cert_path.empty() ? "tls_key" : "tls_cert", " is set"));
  }
  return TlsConfig{cert_path, key_path, client_ca_path};
}

}  // namespace ditserve::server
