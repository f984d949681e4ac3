#include "server/host_flags.h"

#include "absl/flags/flag.h"

namespace {
const ditserve::config::ServerOptions kDefaults;
}  // namespace

ABSL_FLAG(std::string, listen, "0.0.0.0",
          "address the gRPC and metrics servers bind to");
ABSL_FLAG(int, grpc_port, 50051, "gRPC port");
ABSL_FLAG(int, metrics_port, 9400, "Prometheus /metrics port; 0 = off");
ABSL_FLAG(int, max_queue, kDefaults.max_queue,
          "requests waiting to run before RESOURCE_EXHAUSTED");
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
ABSL_FLAG(double, drain_timeout_s, 120,
          "on SIGTERM, longest wait for admitted requests to finish");

namespace ditserve::server {

config::ServerOptions ServerOptionsFromFlags() {
  config::ServerOptions options;
  options.max_queue = absl::GetFlag(FLAGS_max_queue);
  options.max_batch = absl::GetFlag(FLAGS_max_batch);
  options.max_side_pixels = absl::GetFlag(FLAGS_max_side_pixels);
  options.max_pixels =
      int64_t{options.max_side_pixels} * options.max_side_pixels;
  options.max_inference_steps = absl::GetFlag(FLAGS_max_inference_steps);
  options.max_frames = absl::GetFlag(FLAGS_max_frames);
  options.max_video_pixels = absl::GetFlag(FLAGS_max_video_pixels);
  return options;
}

}  // namespace ditserve::server
