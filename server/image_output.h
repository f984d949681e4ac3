#ifndef DITSERVE_SERVER_IMAGE_OUTPUT_H_
#define DITSERVE_SERVER_IMAGE_OUTPUT_H_

#include "core/engine/model_loading.h"
#include "server/engine_executor.h"

namespace ditserve::server {

inline constexpr char kPngMimeType[] = "image/png";
inline constexpr char kRgb8MimeType[] = "application/x-rgb8";
inline constexpr char kLatentMimeType[] = "application/x-latent-f32";

// The OutputEncoder of the host: LATENT_F32 sends each image's latents
// [channels, h, w] as little-endian float32 without decoding; RGB8 and PNG
// decode with `decode` (the VAE) and send raw pixels or a PNG file.
OutputEncoder MakeImageOutput(engine::LatentDecoder decode);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_IMAGE_OUTPUT_H_
