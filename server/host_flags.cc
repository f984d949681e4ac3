#include "server/host_flags.h"

#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"

namespace {
const ditserve::config::ServerOptions kDefaults;
}  // namespace

ABSL_FLAG(std::string, listen, "0.0.0.0",
          "address the gRPC and HTTP API servers bind to");
ABSL_FLAG(int, grpc_port, 50051, "gRPC port");
ABSL_FLAG(int, metrics_port, 9400, "Prometheus /metrics port; 0 = off");
ABSL_FLAG(std::string, metrics_listen, "",
          "address /metrics binds to (plaintext and open: an internal one, "
          "such as 127.0.0.1 or a cluster-only interface); empty = --listen");
ABSL_FLAG(int, http_port, 0,
          "OpenAI-compatible HTTP API port (POST /v1/images/generations, GET "
          "/v1/models, GET /health); 0 = off");
ABSL_FLAG(bool, http_access_log, true,
          "log a line per HTTP API request (client, method and path, status, "
          "size, time taken, request id); successful health checks are left "
          "out");
ABSL_FLAG(std::string, http_cors_origins, "",
          "web origins whose pages may call the HTTP API from browsers "
          "(CORS): comma-separated, e.g. https://app.example.com, or * for "
          "any; empty = none");
ABSL_FLAG(int, max_queue, kDefaults.max_queue,
          "requests waiting to run before RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_queued_per_client, kDefaults.max_queued_per_client,
          "requests one client may have waiting before RESOURCE_EXHAUSTED "
          "(HTTP 429); clients are the names in --auth_token_file, and "
          "requests without a named token count as one client; 0 = no limit");
ABSL_FLAG(int, max_batch, kDefaults.max_batch,
          "images (prompts) per request; queued requests that differ only in "
          "prompts and seeds run together up to this many images");
ABSL_FLAG(int, max_side_pixels, kDefaults.max_side_pixels,
          "largest height or width");
ABSL_FLAG(int, max_inference_steps, kDefaults.max_inference_steps,
          "largest num_inference_steps");
ABSL_FLAG(int, max_frames, kDefaults.max_frames,
          "video models: most frames per output");
ABSL_FLAG(int64_t, max_video_pixels, kDefaults.max_video_pixels,
          "video models: most height × width × num_frames per output");
ABSL_FLAG(int64_t, max_request_bytes, kDefaults.max_request_bytes,
          "most memory one request may add to rank 0, by its model family's "
          "estimate from the request's shapes; larger requests get "
          "RESOURCE_EXHAUSTED naming the estimate; 0 = no limit");
ABSL_FLAG(double, max_queue_wait_s, 0,
          "requests queued longer than this are answered RESOURCE_EXHAUSTED "
          "(HTTP 429) so that clients can retry elsewhere; 0 = no limit");
ABSL_FLAG(double, drain_timeout_s, 120,
          "on SIGTERM, longest wait for admitted requests to finish");
ABSL_FLAG(int, max_concurrent_streams, 64,
          "gRPC calls one client connection may have open at once (HTTP/2 "
          "MAX_CONCURRENT_STREAMS); more wait in the client");
ABSL_FLAG(double, max_connection_idle_s, 600,
          "gRPC connections with no call for this long are closed");
ABSL_FLAG(double, handshake_timeout_s, 10,
          "gRPC connections that have not finished their TLS and HTTP/2 "
          "handshake in this time are closed");
ABSL_FLAG(double, stream_write_timeout_s, 60,
          "GenerateStream calls whose client takes none of a message for this "
          "long are cancelled, so that a client that stops reading does not "
          "keep its outputs in the host's memory (until its deadline, or for "
          "ever without one); above the time one 1 MiB message takes on the "
          "slowest client link");
ABSL_FLAG(double, keepalive_time_s, 60,
          "connections with calls in flight (on the HTTP API, every "
          "connection) but nothing received for this long are probed (an "
          "HTTP/2 ping on gRPC, TCP keepalive in whole seconds on the HTTP "
          "API); a client that died or lost its network "
          "then has its calls cancelled (--keepalive_timeout_s), and their "
          "runs stop, instead of running for a client who is gone");
ABSL_FLAG(double, keepalive_timeout_s, 20,
          "a connection whose keepalive probe is not answered in this time "
          "is closed and its calls cancelled");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate (chain) for TLS on gRPC and the HTTP API; with "
          "--tls_key");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificates: clients must present a certificate one of "
          "them signed (mutual TLS)");
ABSL_FLAG(std::string, auth_token_file, "",
          "file of bearer tokens, one per line ('#' comments); when set, "
          "calls need 'authorization: Bearer <token>'");
ABSL_FLAG(int, credential_refresh_s, 60,
          "seconds between re-reads of --auth_token_file and the TLS files; "
          "changed files that pass the start-up checks replace the current "
          "credentials without a restart");
ABSL_FLAG(bool, auth_health, false,
          "with --auth_token_file, health checks need a token too and "
          "server reflection is not offered");

namespace ditserve::server {

absl::StatusOr<config::ServerOptions> ServerOptionsFromFlags() {
  struct Limit {
    const char* name;
    int64_t value;
    int64_t least;
    int64_t most = std::numeric_limits<int64_t>::max();
  };
  // Every request passes through the queue, so 0 would refuse them all; the
  // HTTP API keeps a thread for each request that may wait.
  constexpr int64_t kMostQueued = 10000;
  for (const Limit& limit : {
           Limit{"max_queue", absl::GetFlag(FLAGS_max_queue), 1, kMostQueued},
           // 0: no limit.
           Limit{"max_queued_per_client",
                 absl::GetFlag(FLAGS_max_queued_per_client), 0},
           Limit{"max_batch", absl::GetFlag(FLAGS_max_batch), 1},
           Limit{"max_side_pixels", absl::GetFlag(FLAGS_max_side_pixels), 1},
           Limit{"max_inference_steps",
                 absl::GetFlag(FLAGS_max_inference_steps), 1},
           Limit{"max_frames", absl::GetFlag(FLAGS_max_frames), 1},
           Limit{"max_video_pixels", absl::GetFlag(FLAGS_max_video_pixels), 1},
           // 0: no limit.
           Limit{"max_request_bytes", absl::GetFlag(FLAGS_max_request_bytes),
                 0},
       }) {
    if (limit.value < limit.least || limit.value > limit.most) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", limit.name, " ", limit.value, ": allowed ", limit.least,
          limit.most == std::numeric_limits<int64_t>::max()
              ? std::string(" or more")
              : absl::StrCat(" to ", limit.most)));
    }
  }
  constexpr double kMaxWaitSeconds = 2e6;
  for (const auto& [name, seconds, zero] :
       {std::tuple{"max_queue_wait_s", absl::GetFlag(FLAGS_max_queue_wait_s),
                   "no limit"},
        std::tuple{"drain_timeout_s", absl::GetFlag(FLAGS_drain_timeout_s),
                   "no wait"}}) {
    if (!(seconds >= 0 && seconds < kMaxWaitSeconds)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " ", seconds, ": allowed 0 (", zero,
                       ") or more, below ", kMaxWaitSeconds));
    }
  }
  config::ServerOptions options;
  options.max_queue = absl::GetFlag(FLAGS_max_queue);
  options.max_queued_per_client = absl::GetFlag(FLAGS_max_queued_per_client);
  options.max_batch = absl::GetFlag(FLAGS_max_batch);
  options.max_side_pixels = absl::GetFlag(FLAGS_max_side_pixels);
  options.max_pixels =
      int64_t{options.max_side_pixels} * options.max_side_pixels;
  options.max_inference_steps = absl::GetFlag(FLAGS_max_inference_steps);
  options.max_frames = absl::GetFlag(FLAGS_max_frames);
  options.max_video_pixels = absl::GetFlag(FLAGS_max_video_pixels);
  options.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  return options;
}

absl::Status CheckConnectionFlags() {
  if (absl::GetFlag(FLAGS_max_concurrent_streams) < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_concurrent_streams ",
        absl::GetFlag(FLAGS_max_concurrent_streams), ": allowed 1 or more"));
  }
  constexpr int kMaxRefreshSeconds = 86400;
  if (const int refresh = absl::GetFlag(FLAGS_credential_refresh_s);
      refresh < 1 || refresh > kMaxRefreshSeconds) {
    return absl::InvalidArgumentError(absl::StrCat("--credential_refresh_s ",
                                                   refresh, ": allowed 1 to ",
                                                   kMaxRefreshSeconds));
  }
  constexpr double kMaxSeconds = 2e6;
  for (const auto& [name, seconds] :
       {std::pair{"max_connection_idle_s",
                  absl::GetFlag(FLAGS_max_connection_idle_s)},
        std::pair{"handshake_timeout_s",
                  absl::GetFlag(FLAGS_handshake_timeout_s)},
        std::pair{"stream_write_timeout_s",
                  absl::GetFlag(FLAGS_stream_write_timeout_s)},
        std::pair{"keepalive_time_s", absl::GetFlag(FLAGS_keepalive_time_s)},
        std::pair{"keepalive_timeout_s",
                  absl::GetFlag(FLAGS_keepalive_timeout_s)}}) {
    // At least 1 ms: gRPC takes whole milliseconds, and a value that
    // rounded to 0 would close connections at once.
    if (!(seconds >= 0.001 && seconds < kMaxSeconds)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " ", seconds,
                       ": allowed from 0.001 and below ", kMaxSeconds));
    }
  }
  return absl::OkStatus();
}

}  // namespace ditserve::server
