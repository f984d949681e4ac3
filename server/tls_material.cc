#include "server/tls_material.h"

#include <openssl/err.h>
#include <openssl/pem.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace ditserve::server {
namespace {

absl::Status BadFile(absl::string_view flag, const std::string& path,
                     absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, " ", path, " ", problem));
}

absl::StatusOr<std::string> ReadFile(absl::string_view flag,
                                     const std::string& path) {
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  if (!file) return BadFile(flag, path, "cannot be read");
  return contents.str();
}

struct FreeBio {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, FreeBio>;

BioPtr ReadOnlyBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// Every certificate in `pem`, in order.
std::unique_ptr<STACK_OF(X509), ParsedTls::Free> ReadCertificates(
    const std::string& pem) {
  std::unique_ptr<STACK_OF(X509), ParsedTls::Free> certificates(
      sk_X509_new_null());
  BioPtr bio = ReadOnlyBio(pem);
  while (X509* certificate =
             PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    sk_X509_push(certificates.get(), certificate);
  }
  // The loop ends on the "no start line" error at the end of the input.
  ERR_clear_error();
  return certificates;
}

}  // namespace

absl::StatusOr<TlsMaterial> ReadTlsMaterial(const TlsConfig& config) {
  TlsMaterial material;
  ASSIGN_OR_RETURN(material.cert_chain, ReadFile("tls_cert", config.cert_path));
  ASSIGN_OR_RETURN(material.private_key, ReadFile("tls_key", config.key_path));
  if (!config.client_ca_path.empty()) {
    ASSIGN_OR_RETURN(material.client_ca,
                     ReadFile("tls_client_ca", config.client_ca_path));
  }
  return material;
}

absl::StatusOr<ParsedTls> ParseTlsMaterial(const TlsMaterial& material,
                                           const TlsConfig& config) {
  ParsedTls parsed;
  parsed.chain = ReadCertificates(material.cert_chain);
  if (sk_X509_num(parsed.chain.get()) == 0) {
    return BadFile("tls_cert", config.cert_path, "holds no PEM certificate");
  }
  parsed.certificate.reset(sk_X509_shift(parsed.chain.get()));
  BioPtr key_bio = ReadOnlyBio(material.private_key);
  parsed.private_key.reset(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (parsed.private_key == nullptr) {
    return BadFile("tls_key", config.key_path,
                   "holds no unencrypted PEM private key");
  }
  if (X509_check_private_key(parsed.certificate.get(),
                             parsed.private_key.get()) != 1) {
    ERR_clear_error();
    return BadFile("tls_key", config.key_path,
                   absl::StrCat("is not the key of the certificate in "
                                "--tls_cert ",
                                config.cert_path));
  }
  if (config.client_ca_path.empty()) return parsed;
  std::unique_ptr<STACK_OF(X509), ParsedTls::Free> authorities =
      ReadCertificates(material.client_ca);
  if (sk_X509_num(authorities.get()) == 0) {
    return BadFile("tls_client_ca", config.client_ca_path,
                   "holds no PEM certificate");
  }
  parsed.client_ca_store.reset(X509_STORE_new());
  parsed.client_ca_names.reset(sk_X509_NAME_new_null());
  for (int i = 0; i < sk_X509_num(authorities.get()); ++i) {
    X509* authority = sk_X509_value(authorities.get(), i);
    X509_STORE_add_cert(parsed.client_ca_store.get(), authority);
    sk_X509_NAME_push(parsed.client_ca_names.get(),
                      X509_NAME_dup(X509_get_subject_name(authority)));
  }
  return parsed;
}

}  // namespace ditserve::server
