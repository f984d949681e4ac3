#ifndef DITSERVE_CORE_MODELS_LAYERS_UNPATCHIFY_H_
#define DITSERVE_CORE_MODELS_LAYERS_UNPATCHIFY_H_

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace ditserve::models {

// Token outputs [B, grid_height × grid_width, patch² × channels] of a
// transformer that cut latents into patch × patch tokens, row-major, back to
// [B, channels, grid_height × patch, grid_width × patch] (diffusers'
// "n h w p q c -> n c h p w q").
at::Tensor Unpatchify(const at::Tensor& tokens, int64_t grid_height,
                      int64_t grid_width, int64_t patch, int64_t channels);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_LAYERS_UNPATCHIFY_H_
