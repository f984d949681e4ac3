#ifndef DITSERVE_SERVER_OPENAI_IMAGES_H_
#define DITSERVE_SERVER_OPENAI_IMAGES_H_

// The OpenAI Images API (POST /v1/images/generations) in terms of
// ditserve.v1: its request body becomes a GenerateRequest, a GenerateResponse
// becomes its response body, and a Status becomes its error body.
//
// OpenAI's fields: model, prompt, n, size ("WxH"), response_format
// ("b64_json"), user, output_format ("png", "jpeg", "webp", and "mp4" for
// video models), output_compression (the JPEG or WebP quality, 1 to 100:
// GenerateRequest.output_quality), and quality ("auto", "standard"), style
// ("vivid") and background ("auto", "opaque") with only the values that ask
// for what the server does anyway.
// ditserve's own fields keep their GenerateRequest names: negative_prompt,
// num_inference_steps, guidance_scale, seed, max_sequence_length,
// num_frames, fps, use_dynamic_cfg, use_resolution_binning, vae_tiling,
// request_id, priority.
// "stream": true answers with server-sent events instead of one body, as
// OpenAI streams images: "ditserve.progress" after each denoising step,
// with OpenAI's "partial_images" (0 to 3, streamed requests only) an
// "image_generation.partial_image" per output after the steps
// InputConfig.partial_image_steps names, then "image_generation.completed"
// for each output.
// Ranges are checked by Freeze, as for gRPC.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ditserve/v1/generation.pb.h"

namespace ditserve::server {

struct ImagesRequest {
  v1::GenerateRequest request;
  // OpenAI's end-user id, for the request's log line only.
  std::string user;
  // Answer with server-sent events (the *Event functions below).
  bool stream = false;
};

// INVALID_ARGUMENT naming the field and what it allows for a body that is
// not such a request; `max_batch` bounds n.
absl::StatusOr<ImagesRequest> ParseImagesRequest(absl::string_view body,
                                                 int max_batch);

// {"created", "data": [{"b64_json"}...], "output_format", "size", "seed",
// "request_id"}: one entry per Image, in the response's order.
std::string ImagesResponseBody(const v1::GenerateResponse& response,
                               absl::Time created);

// OpenAI's error body: {"error": {"message", "type", "param", "code"}},
// with `param` the field a parse error names (null otherwise) and `code`
// the gRPC code name ("invalid_argument", ...).
std::string ErrorBody(const absl::Status& status);

// One server-sent event of a streamed request, each "event: TYPE\ndata:
// JSON\n\n", its JSON's "type" the event's type as OpenAI's are:
// {"type": "ditserve.progress", "step", "total_steps", "elapsed_seconds"}.
std::string ProgressEvent(const v1::GenerateStreamResponse::Progress& progress);
// One per output and preview: {"type": "image_generation.partial_image",
// "b64_json", "created_at", "size", "output_format", "partial_image_index",
// and ditserve's "index" (the output's) and "step"}.
std::string PartialImageEvent(
    const v1::GenerateStreamResponse::PartialImage& partial,
    absl::Time created);
// One per output, in the response's order: {"type":
// "image_generation.completed", "b64_json", "created_at", "size",
// "output_format", "index", "seed", "request_id"}.
std::vector<std::string> CompletedEvents(const v1::GenerateResponse& response,
                                         absl::Time created);
// An "error" event whose data is ErrorBody, which OpenAI's SDKs raise as
// the same APIError a refused request gets.
std::string ErrorEvent(const absl::Status& status);
// A comment line: keeps proxies from closing a connection that waits for a
// long step, and finds a client that has gone.
inline constexpr char kKeepAliveEvent[] = ": keep-alive\n\n";

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_OPENAI_IMAGES_H_
