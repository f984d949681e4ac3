#ifndef DITSERVE_SERVER_HOST_FLAGS_H_
#define DITSERVE_SERVER_HOST_FLAGS_H_

// Flags only rank 0 (ditserve-host) takes; the rank flags of every rank are
// in worker/rank_flags.h.

#include <cstdint>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/config/server_options.h"

ABSL_DECLARE_FLAG(std::string, listen);
ABSL_DECLARE_FLAG(int, grpc_port);
ABSL_DECLARE_FLAG(int, metrics_port);
ABSL_DECLARE_FLAG(std::string, metrics_listen);
ABSL_DECLARE_FLAG(int, http_port);
ABSL_DECLARE_FLAG(bool, http_access_log);
ABSL_DECLARE_FLAG(std::string, http_cors_origins);
ABSL_DECLARE_FLAG(int, max_queue);
ABSL_DECLARE_FLAG(int, max_queued_per_client);
ABSL_DECLARE_FLAG(int, max_batch);
ABSL_DECLARE_FLAG(int, max_side_pixels);
ABSL_DECLARE_FLAG(int, max_inference_steps);
ABSL_DECLARE_FLAG(int64_t, max_request_bytes);
ABSL_DECLARE_FLAG(double, max_queue_wait_s);
ABSL_DECLARE_FLAG(double, drain_timeout_s);
ABSL_DECLARE_FLAG(int, max_concurrent_streams);
ABSL_DECLARE_FLAG(double, max_connection_idle_s);
ABSL_DECLARE_FLAG(double, handshake_timeout_s);
ABSL_DECLARE_FLAG(double, stream_write_timeout_s);
ABSL_DECLARE_FLAG(double, keepalive_time_s);
ABSL_DECLARE_FLAG(double, keepalive_timeout_s);
ABSL_DECLARE_FLAG(std::string, tls_cert);
ABSL_DECLARE_FLAG(std::string, tls_key);
ABSL_DECLARE_FLAG(std::string, tls_client_ca);
ABSL_DECLARE_FLAG(std::string, auth_token_file);
ABSL_DECLARE_FLAG(int, credential_refresh_s);
ABSL_DECLARE_FLAG(bool, auth_health);

namespace ditserve::server {

// The admission limits, INVALID_ARGUMENT naming the flag and its allowed
// values when one (or --max_queue_wait_s) is out of range (checked before the
// rendezvous, so that a bad flag fails in seconds).
absl::StatusOr<config::ServerOptions> ServerOptionsFromFlags();

// INVALID_ARGUMENT naming the flag unless --max_concurrent_streams is at
// least 1, --credential_refresh_s is 1 to 86400, and the connection and
// stream write timeouts are positive and below 24 days (gRPC takes
// milliseconds as an int).
absl::Status CheckConnectionFlags();

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_HOST_FLAGS_H_
