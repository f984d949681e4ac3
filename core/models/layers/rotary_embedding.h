#ifndef DITSERVE_CORE_MODELS_LAYERS_ROTARY_EMBEDDING_H_
#define DITSERVE_CORE_MODELS_LAYERS_ROTARY_EMBEDDING_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace ditserve::models {

// cos and sin tables, [S, D] float32, one row per sequence position; each
// frequency appears twice in a row (interleaved (real, imag) pairs).
struct RotaryTables {
  at::Tensor cos;
  at::Tensor sin;
};

// FLUX's multi-axis RoPE (diffusers FluxPosEmbed): position ids [S, n_axes];
// axis i contributes axes_dims[i] channels with frequencies
// theta^(-2j / axes_dims[i]). Angles, cos and sin are computed in float64 and
// then cast to float32, as diffusers does on CPU and CUDA.
RotaryTables FluxRotaryTables(const at::Tensor& ids,
                              const std::vector<int64_t>& axes_dims,
                              double theta);

// Where a tensor of attention heads keeps its tokens.
enum class HeadLayout {
  kHeadsFirst,   // [B, H, S, D], as attention takes them
  kTokensFirst,  // [B, S, H, D], as a projection's output splits into heads
};

// Rotates x by the tables [S, D]: each pair (a, b) of channels becomes
// (a cos - b sin, b cos + a sin), computed in float32 and returned in the
// dtype of x.
at::Tensor ApplyRotaryEmbedding(const at::Tensor& x, const RotaryTables& tables,
                                HeadLayout layout);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_LAYERS_ROTARY_EMBEDDING_H_
