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

// Turns rank 0's gathered latents [prompts, ...shapes.image_latent_shape]
// into the outputs of config.output_format, recording vae_decode and encode
// in `timings`.
using OutputEncoder = std::function<absl::StatusOr<std::vector<v1::Image>>(
    const v1::InputConfig& config, const at::Tensor& latents,
    engine::StageTimings& timings)>;

// The OutputEncoder of the host: LATENT_F32 sends each prompt's latents as
// little-endian float32 without decoding; the others decode with `program`'s
// Decode (the family's VAE) and send raw pixels, a PNG or JPEG file per image
// or video frame, a WebP per image or animated WebP per video, or an H.264
// MP4 per video. `program` must outlive the encoder.
OutputEncoder MakeImageOutput(engine::RankProgram& program);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_IMAGE_OUTPUT_H_
