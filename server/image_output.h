#ifndef DITSERVE_SERVER_IMAGE_OUTPUT_H_
#define DITSERVE_SERVER_IMAGE_OUTPUT_H_

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/engine/rank_program.h"
#include "core/engine/stage_timings.h"
#include "ditserve/v1/generation.pb.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::server {

inline constexpr char kPngMimeType[] = "image/png";
inline constexpr char kRgb8MimeType[] = "application/x-rgb8";
inline constexpr char kLatentMimeType[] = "application/x-latent-f32";
inline constexpr char kMp4MimeType[] = "video/mp4";

// Turns rank 0's gathered latents [prompts, ...shapes.image_latent_shape]
// into the outputs of config.output_format, recording vae_decode and encode
// in `timings`.
using OutputEncoder = std::function<absl::StatusOr<std::vector<v1::Image>>(
    const v1::InputConfig& config, const at::Tensor& latents,
    engine::StageTimings& timings)>;

// The OutputEncoder of the host: LATENT_F32 sends each prompt's latents as
// little-endian float32 without decoding; RGB8, PNG and MP4 decode with
// `program`'s Decode (the family's VAE) and send raw pixels, a PNG file per
// image or video frame, or an H.264 MP4 per video. `program` must outlive
// the encoder.
OutputEncoder MakeImageOutput(engine::RankProgram& program);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_IMAGE_OUTPUT_H_
