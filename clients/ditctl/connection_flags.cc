#include "clients/ditctl/connection_flags.h"

#include "absl/strings/str_cat.h"

namespace ditserve::ditctl {
namespace {

// The most often a ditserve host is promised to accept a client's pings
// (README, "Clients that vanish").
constexpr int kShortestKeepaliveSeconds = 10;
// Its milliseconds fit a deadline, and gRPC's int.
constexpr int kLongestSeconds = 1'000'000;

}  // namespace

absl::Status CheckConnectionFlags(const ConnectionFlags& flags) {
  if (!(flags.timeout_seconds > 0 &&
        flags.timeout_seconds <= kLongestSeconds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--timeout ", flags.timeout_seconds, ": allowed above 0 and at most ",
        kLongestSeconds, " seconds"));
  }
  if (flags.keepalive_seconds != 0 &&
      !(flags.keepalive_seconds >= kShortestKeepaliveSeconds &&
        flags.keepalive_seconds <= kLongestSeconds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--keepalive ", flags.keepalive_seconds, ": allowed 0 (no pings), or ",
        kShortestKeepaliveSeconds, " to ", kLongestSeconds,
        " seconds (the most often a ditserve host is promised to accept "
        "pings)"));
  }
  if (flags.keepalive_seconds != 0 &&
      !(flags.keepalive_timeout_seconds >= 0.001 &&
        flags.keepalive_timeout_seconds <= kLongestSeconds)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--keepalive_timeout ", flags.keepalive_timeout_seconds,
                     ": allowed 0.001 to ", kLongestSeconds, " seconds"));
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
