#include "server/host_credentials.h"

#include <optional>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "grpcpp/security/server_credentials.h"
#include "server/host_flags.h"
#include "server/metrics.h"
#include "server/tls_config.h"
#include "server/tls_material.h"

namespace ditserve::server {

absl::StatusOr<HostCredentials> CredentialsFromFlags() {
  HostCredentials credentials;
  ASSIGN_OR_RETURN(
      const std::optional<TlsConfig> tls,
      MakeTlsConfig(absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key),
                    absl::GetFlag(FLAGS_tls_client_ca)));
  if (tls.has_value()) {
    ASSIGN_OR_RETURN(const TlsMaterial material, ReadTlsMaterial(*tls));
    ASSIGN_OR_RETURN(credentials.tls, TlsIdentity::Create(*tls, material));
    credentials.grpc = credentials.tls->GrpcCredentials();
  } else {
    credentials.grpc = grpc::InsecureServerCredentials();
  }
  if (absl::GetFlag(FLAGS_auth_token_file).empty()) {
    credentials.auth = std::make_unique<BearerAuth>();
  } else {
    ASSIGN_OR_RETURN(credentials.auth, BearerAuth::FromTokenFile(
                                           absl::GetFlag(FLAGS_auth_token_file),
                                           absl::GetFlag(FLAGS_auth_health)));
  }
  return credentials;
}

std::vector<ReloadedCredential> HostCredentials::Reloadable(
    Metrics* metrics) const {
  std::vector<ReloadedCredential> reloadable;
  if (auth->enabled()) {
    reloadable.push_back(
        {kAuthTokensCredential,
         [auth = auth.get(), metrics]() -> absl::StatusOr<bool> {
           ASSIGN_OR_RETURN(const bool changed, auth->Reload());
           if (changed) metrics->AddClients(auth->ClientNames());
           return changed;
         }});
  }
  if (tls != nullptr) {
    reloadable.push_back(
        {kTlsCredential, [tls = tls.get()] { return tls->Reload(); }});
  }
  return reloadable;
}

std::string HostCredentials::Describe() const {
  return absl::StrCat("TLS ",
                      tls == nullptr ? "off"
                      : !tls->requires_client_certificate()
                          ? "on"
                          : "on, client certificates required",
                      ", bearer tokens ", auth->Describe());
}

}  // namespace ditserve::server
