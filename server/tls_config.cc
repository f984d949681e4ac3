#include "server/tls_config.h"

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "grpcpp/security/server_credentials.h"

namespace ditserve::server {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& flag,
                                    const std::string& path) {
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  if (!file || contents.str().find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " ", path, " is not a readable PEM file"));
  }
  return contents.str();
}

}  // namespace

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
  RETURN_IF_ERROR(ReadPem("tls_cert", cert_path).status());
  RETURN_IF_ERROR(ReadPem("tls_key", key_path).status());
  if (!client_ca_path.empty()) {
    RETURN_IF_ERROR(ReadPem("tls_client_ca", client_ca_path).status());
  }
  return TlsConfig{cert_path, key_path, client_ca_path};
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> GrpcServerCredentials(
    const std::optional<TlsConfig>& tls) {
  if (!tls.has_value()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      tls->client_ca_path.empty()
          ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ASSIGN_OR_RETURN(pair.cert_chain, ReadPem("tls_cert", tls->cert_path));
  ASSIGN_OR_RETURN(pair.private_key, ReadPem("tls_key", tls->key_path));
  options.pem_key_cert_pairs.push_back(std::move(pair));
  if (!tls->client_ca_path.empty()) {
    ASSIGN_OR_RETURN(options.pem_root_certs,
                     ReadPem("tls_client_ca", tls->client_ca_path));
  }
  return grpc::SslServerCredentials(options);
}

}  // namespace ditserve::server
