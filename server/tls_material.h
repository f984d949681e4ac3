#ifndef DITSERVE_SERVER_TLS_MATERIAL_H_
#define DITSERVE_SERVER_TLS_MATERIAL_H_

// The contents of the TLS files (--tls_cert, --tls_key, --tls_client_ca),
// read and checked as one set: the host serves a set only when every file
// parses and the key belongs to the certificate, at start-up and each time
// the files are re-read (credential_reloader.h).

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/tls_config.h"

namespace ditserve::server {

struct TlsMaterial {
  // PEM: the certificate first, then any intermediates.
  std::string cert_chain;
  std::string private_key;
  // PEM; empty when clients are not asked for a certificate.
  std::string client_ca;

  bool operator==(const TlsMaterial& other) const {
    return cert_chain == other.cert_chain && private_key == other.private_key &&
           client_ca == other.client_ca;
  }
  bool operator!=(const TlsMaterial& other) const { return !(*this == other); }
};

// TlsMaterial as OpenSSL objects, for the HTTPS handshakes.
struct ParsedTls {
  struct Free {
    void operator()(X509* x) const { X509_free(x); }
    void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
    void operator()(STACK_OF(X509) * certs) const {
      sk_X509_pop_free(certs, X509_free);
    }
    void operator()(X509_STORE* store) const { X509_STORE_free(store); }
    void operator()(STACK_OF(X509_NAME) * names) const {
      sk_X509_NAME_pop_free(names, X509_NAME_free);
    }
  };
  std::unique_ptr<X509, Free> certificate;
  // The intermediates after the certificate (possibly none).
  std::unique_ptr<STACK_OF(X509), Free> chain;
  std::unique_ptr<EVP_PKEY, Free> private_key;
  // Both null without a client CA.
  std::unique_ptr<X509_STORE, Free> client_ca_store;
  std::unique_ptr<STACK_OF(X509_NAME), Free> client_ca_names;
};

// The files' contents, unchecked: a re-read of unchanged files parses
// nothing. INVALID_ARGUMENT naming the flag and the file when one cannot be
// read.
absl::StatusOr<TlsMaterial> ReadTlsMaterial(const TlsConfig& config);

// INVALID_ARGUMENT naming the flag and the file when a file holds no PEM
// object of its kind, or the key is not the certificate's.
absl::StatusOr<ParsedTls> ParseTlsMaterial(const TlsMaterial& material,
                                           const TlsConfig& config);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_TLS_MATERIAL_H_
