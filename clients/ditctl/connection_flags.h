#ifndef DITSERVE_CLIENTS_DITCTL_CONNECTION_FLAGS_H_
#define DITSERVE_CLIENTS_DITCTL_CONNECTION_FLAGS_H_

#include <string>

#include "absl/status/status.h"

namespace ditserve::ditctl {

// How ditctl reaches the server, as its flags give it.
struct ConnectionFlags {
  double timeout_seconds = 0;
  // 0 sends no keepalive pings.
  double keepalive_seconds = 0;
  double keepalive_timeout_seconds = 0;
  std::string tls_ca;
  std::string tls_client_cert;
  std::string tls_client_key;
};

// INVALID_ARGUMENT naming the flag when `flags` cannot work as asked: a
// --timeout outside (0, 1000000] (its milliseconds must fit a deadline); a
// --keepalive other than 0 outside [10, 1000000] (more often than a ditserve
// host is promised to accept pings; its milliseconds must fit gRPC's int),
// or with a --keepalive_timeout outside [0.001, 1000000]; or a client
// certificate without its key, or either without --tls_ca, which would
// otherwise send them, and the token, over a plaintext channel.
absl::Status CheckConnectionFlags(const ConnectionFlags& flags);

}  // namespace ditserve::ditctl

#endif  // DITSERVE_CLIENTS_DITCTL_CONNECTION_FLAGS_H_
