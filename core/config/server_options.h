#ifndef DITSERVE_CORE_CONFIG_SERVER_OPTIONS_H_
#define DITSERVE_CORE_CONFIG_SERVER_OPTIONS_H_

#include <cstdint>

namespace ditserve::config {

// Bounds the server enforces on requests; the host's flags default to these
// values.
struct ServerOptions {
  // Prompts per request (and per batched config).
  int max_batch = 4;
  // Requests waiting to run before new ones get RESOURCE_EXHAUSTED.
  int max_queue = 16;
  // Of those, most from one client (0 = no limit).
  int max_queued_per_client = 0;
  // Largest height or width in pixels.
  int max_side_pixels = 2048;
  // Largest height × width.
  int64_t max_pixels = int64_t{2048} * 2048;
  int max_inference_steps = 200;
  // Video: most frames, and most height × width × frames: CogVideoX1.5's
  // longer recommended length, 161 frames, at its default 1360 × 768. The
  // memory estimate (max_request_bytes) is what keeps a rank's memory.
  int max_frames = 161;
  int64_t max_video_pixels = int64_t{1360} * 768 * 161;
  // Largest prompt (and negative prompt) in UTF-8 bytes.
  int max_prompt_bytes = 4096;
  // Smallest guidance_scale accepted, and largest.
  float min_guidance_scale = 0.0F;
  float max_guidance_scale = 100.0F;
  // Longest client-chosen request id.
  int max_request_id_chars = 128;
  // Most memory one request may add to rank 0 by its family's estimate
  // (Family::RequestBytes); 0 = no limit. 16 GiB leaves a 24 GiB machine 8
  // for the loaded model and the system.
  int64_t max_request_bytes = int64_t{16} << 30;
};

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_SERVER_OPTIONS_H_
