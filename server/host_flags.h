#ifndef DITSERVE_SERVER_HOST_FLAGS_H_
#define DITSERVE_SERVER_HOST_FLAGS_H_

// Flags only rank 0 (ditserve-host) takes; the rank flags of every rank are
// in worker/rank_flags.h.

#include <string>

#include "absl/flags/declare.h"
#include "core/config/server_options.h"

ABSL_DECLARE_FLAG(std::string, listen);
ABSL_DECLARE_FLAG(int, grpc_port);
ABSL_DECLARE_FLAG(int, metrics_port);
ABSL_DECLARE_FLAG(int, http_port);
ABSL_DECLARE_FLAG(int, max_queue);
ABSL_DECLARE_FLAG(int, max_batch);
ABSL_DECLARE_FLAG(int, max_side_pixels);
ABSL_DECLARE_FLAG(int, max_inference_steps);
ABSL_DECLARE_FLAG(double, drain_timeout_s);
ABSL_DECLARE_FLAG(std::string, tls_cert);
ABSL_DECLARE_FLAG(std::string, tls_key);
ABSL_DECLARE_FLAG(std::string, tls_client_ca);
ABSL_DECLARE_FLAG(std::string, auth_token_file);
ABSL_DECLARE_FLAG(bool, auth_health);

namespace ditserve::server {

config::ServerOptions ServerOptionsFromFlags();

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_HOST_FLAGS_H_
