#ifndef DITSERVE_SERVER_IMAGE_OUTPUT_H_
#define DITSERVE_SERVER_IMAGE_OUTPUT_H_

#include "core/engine/rank_program.h"
#include "server/engine_executor.h"

namespace ditserve::server {

inline constexpr char kPngMimeType[] = "image/png";
inline constexpr char kRgb8MimeType[] = "application/x-rgb8";
inline constexpr char kLatentMimeType[] = "application/x-latent-f32";

// The OutputEncoder of the host: LATENT_F32 sends each image's latents
// [channels, h, w] as little-endian float32 without decoding; RGB8 and PNG
// decode with `program`'s Decode (the family's VAE) and send raw pixels or a
// PNG file. `program` must outlive the encoder.
OutputEncoder MakeImageOutput(engine::RankProgram& program);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_IMAGE_OUTPUT_H_
