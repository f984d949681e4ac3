#include "clients/ditctl/connection_flags.h"

#include "absl/strings/str_cat.h"

namespace ditserve::ditctl {

absl::Status CheckConnectionFlags(const ConnectionFlags& flags) {
  if (!(flags.timeout_seconds > 0 && flags.timeout_seconds <= 1e6)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--timeout ", flags.timeout_seconds,
                     ": allowed above 0 and at most 1000000 seconds"));
  }
  if (flags.tls_client_cert.empty() != flags.tls_client_key.empty()) {
    return absl::InvalidArgumentError(
        "--tls_client_cert and --tls_client_key go together: give both for "
        "mutual TLS, or neither");
  }
  if (!flags.tls_client_cert.empty() && flags.tls_ca.empty()) {
    return absl::InvalidArgumentError(
        "--tls_client_cert needs --tls_ca: without it the channel is "
        "plaintext");
  }
  return absl::OkStatus();
}

}  // namespace ditserve::ditctl
