#include "server/tls_identity.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace ditserve::server {
namespace {

absl::Status SystemError(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// A new close-on-exec memfd holding `contents`.
absl::StatusOr<int> NewMemoryFile(const char* name,
                                  const std::string& contents) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return SystemError(absl::StrCat("memfd_create ", name));
  for (size_t written = 0; written < contents.size();) {
    const ssize_t n =
        ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status error = SystemError(absl::StrCat("writing memfd ", name));
      ::close(fd);
      return error;
    }
    written += static_cast<size_t>(n);
  }
  return fd;
}

}  // namespace

// Only this process (and root) can open /proc/self/fd of it, as with the
// files it copies; nothing reaches a disk.
class TlsIdentity::MemoryFile {
 public:
  static absl::StatusOr<std::unique_ptr<MemoryFile>> Create(
      const char* name, const std::string& contents) {
    ASSIGN_OR_RETURN(const int fd, NewMemoryFile(name, contents));
    return std::unique_ptr<MemoryFile>(new MemoryFile(name, fd));
  }
  ~MemoryFile() { ::close(fd_); }

  std::string path() const { return absl::StrCat("/proc/self/fd/", fd_); }

  // A reader that opens path() gets the old contents or the new whole: the
  // new go into a memfd of their own, which dup3 puts in place at once.
  // gRPC's watcher reads the key and then the certificate, and retries when
  // either file's modification time (whole seconds; each swap makes a new
  // file, at most once a second) changed during the read. Only a read that
  // falls wholly between the swaps of the two files, microseconds apart,
  // takes a mismatched pair, which its next re-read a second later mends.
  absl::Status Replace(const std::string& contents) {
    ASSIGN_OR_RETURN(const int fd, NewMemoryFile(name_, contents));
    const int placed = ::dup3(fd, fd_, O_CLOEXEC);
    absl::Status error = placed < 0 ? SystemError("dup3") : absl::OkStatus();
    ::close(fd);
    return error;
  }

 private:
  MemoryFile(const char* name, int fd) : name_(name), fd_(fd) {}

  const char* const name_;
  const int fd_;
};

absl::StatusOr<std::unique_ptr<TlsIdentity>> TlsIdentity::Create(
    const TlsConfig& config, const TlsMaterial& material) {
  ASSIGN_OR_RETURN(ParsedTls parsed, ParseTlsMaterial(material, config));
  ASSIGN_OR_RETURN(std::unique_ptr<MemoryFile> cert_chain,
                   MemoryFile::Create("tls_cert", material.cert_chain));
  ASSIGN_OR_RETURN(std::unique_ptr<MemoryFile> private_key,
                   MemoryFile::Create("tls_key", material.private_key));
  std::unique_ptr<MemoryFile> client_ca;
  if (!config.client_ca_path.empty()) {
    ASSIGN_OR_RETURN(client_ca,
                     MemoryFile::Create("tls_client_ca", material.client_ca));
  }
  std::unique_ptr<TlsIdentity> identity(
      new TlsIdentity(config, std::move(cert_chain), std::move(private_key),
                      std::move(client_ca)));
  absl::MutexLock lock(&identity->mu_);
  identity->material_ = material;
  identity->parsed_ = std::make_shared<const ParsedTls>(std::move(parsed));
  return identity;
}

TlsIdentity::TlsIdentity(const TlsConfig& config,
                         std::unique_ptr<MemoryFile> cert_chain,
                         std::unique_ptr<MemoryFile> private_key,
                         std::unique_ptr<MemoryFile> client_ca)
    : config_(config),
      cert_chain_(std::move(cert_chain)),
      private_key_(std::move(private_key)),
      client_ca_(std::move(client_ca)) {}

TlsIdentity::~TlsIdentity() = default;

TlsMaterial TlsIdentity::material() const {
  absl::MutexLock lock(&mu_);
  return material_;
}

absl::Status TlsIdentity::Replace(const TlsMaterial& material) {
  ASSIGN_OR_RETURN(ParsedTls parsed, ParseTlsMaterial(material, config_));
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(cert_chain_->Replace(material.cert_chain));
  RETURN_IF_ERROR(private_key_->Replace(material.private_key));
  if (client_ca_ != nullptr) {
    RETURN_IF_ERROR(client_ca_->Replace(material.client_ca));
  }
  material_ = material;
  parsed_ = std::make_shared<const ParsedTls>(std::move(parsed));
  return absl::OkStatus();
}

absl::StatusOr<bool> TlsIdentity::Reload() {
  ASSIGN_OR_RETURN(TlsMaterial material, ReadTlsMaterial(config_));
  if (material == this->material()) return false;
  RETURN_IF_ERROR(Replace(material));
  return true;
}

TlsIdentity::FilePaths TlsIdentity::GrpcFiles() const {
  return {cert_chain_->path(), private_key_->path(),
          client_ca_ == nullptr ? "" : client_ca_->path()};
}

std::shared_ptr<grpc::ServerCredentials> TlsIdentity::GrpcCredentials() const {
  constexpr unsigned int kRereadSeconds = 1;
  const FilePaths paths = GrpcFiles();
  auto files =
      std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
          paths.private_key_path, paths.cert_chain_path, paths.client_ca_path,
          kRereadSeconds);
  grpc::experimental::TlsServerCredentialsOptions options(files);
  options.watch_identity_key_cert_pairs();
  if (client_ca_ != nullptr) {
    options.watch_root_certs();
    options.set_cert_request_type(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

bool TlsIdentity::SetUpHttps(SSL_CTX& context) const {
  if (SSL_CTX_set_min_proto_version(&context, TLS1_2_VERSION) != 1) {
    return false;
  }
  SSL_CTX_set_cert_cb(&context, &TlsIdentity::PresentCurrentSet,
                      const_cast<TlsIdentity*>(this));
  if (requires_client_certificate()) {
    SSL_CTX_set_verify(
        &context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return true;
}

// OpenSSL calls this before it sends the server's certificate, and so
// before it asks for and checks the client's.
int TlsIdentity::PresentCurrentSet(SSL* ssl, void* identity) {
  const std::shared_ptr<const ParsedTls> set =
      static_cast<const TlsIdentity*>(identity)->current();
  if (SSL_use_cert_and_key(ssl, set->certificate.get(), set->private_key.get(),
                           set->chain.get(), /*override=*/1) != 1) {
    return 0;
  }
  if (set->client_ca_store == nullptr) return 1;
  if (SSL_set1_verify_cert_store(ssl, set->client_ca_store.get()) != 1) {
    return 0;
  }
  SSL_set_client_CA_list(ssl, SSL_dup_CA_list(set->client_ca_names.get()));
  return 1;
}

std::shared_ptr<const ParsedTls> TlsIdentity::current() const {
  absl::MutexLock lock(&mu_);
  return parsed_;
}

}  // namespace ditserve::server
