#ifndef DITSERVE_CORE_FAMILIES_PIXART_PIXART_EMBEDDINGS_H_
#define DITSERVE_CORE_FAMILIES_PIXART_PIXART_EMBEDDINGS_H_

// The input embeddings of PixArtTransformer2DModel, with the diffusers class
// and attribute names: the patch embedding, the adaLN-single conditioning
// (timestep and α's micro-conditions) and the caption projection.

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <optional>
#include <tuple>

#include "core/models/kept_for_key.h"
#include "core/models/layers/conv.h"
#include "core/models/layers/linear.h"
#include "core/models/layers/timestep_embeddings.h"

namespace ditserve::models {

// diffusers PatchEmbed as PixArt builds it (no layer norm, sincos table not
// stored): `proj` is a patch_size-strided convolution; the table is made for
// the grid of the input, scaled to base_size, and kept on its device until a
// grid of another size comes.
class PixArtPatchEmbedImpl : public torch::nn::Module {
 public:
  PixArtPatchEmbedImpl(int64_t in_channels, int64_t dim, int64_t patch_size,
                       double base_size, double interpolation_scale);

  // latent [B, C, H, W] -> tokens [B, (H / p) * (W / p), dim].
  at::Tensor Forward(const at::Tensor& latent);

 private:
  int64_t dim_;
  double base_size_;
  double interpolation_scale_;
  Conv2d proj_;
  // Keyed by the grid's height and width, and the device.
  KeptForKey<std::tuple<int64_t, int64_t, at::Device>, at::Tensor> table_;
};
TORCH_MODULE(PixArtPatchEmbed);

// PixArt-α's micro-conditions: [B, 2] (height, width) and [B, 1]
// (height / width) of the requested image.
struct PixArtMicroConditions {
  at::Tensor resolution;
  at::Tensor aspect_ratio;
};

// diffusers PixArtAlphaCombinedTimestepSizeEmbeddings: the timestep embedding
// [B, dim], plus (with additional conditions) the resolution and aspect-ratio
// embeddings of width dim / 3 each, concatenated ([res_h, res_w, ar]).
class PixArtAlphaCombinedTimestepSizeEmbeddingsImpl : public torch::nn::Module {
 public:
  PixArtAlphaCombinedTimestepSizeEmbeddingsImpl(int64_t dim,
                                                bool use_additional_conditions);

  // timestep [B] (integer or float, 0..999). `conditions` is required exactly
  // when the module was built with additional conditions.
  at::Tensor Forward(const at::Tensor& timestep,
                     const std::optional<PixArtMicroConditions>& conditions,
                     c10::ScalarType dtype);

 private:
  bool use_additional_conditions_;
  TimestepEmbedding timestep_embedder_;
  TimestepEmbedding resolution_embedder_{nullptr};
  TimestepEmbedding aspect_ratio_embedder_{nullptr};
};
TORCH_MODULE(PixArtAlphaCombinedTimestepSizeEmbeddings);

struct AdaLayerNormSingleOutput {
  // [B, 6 * dim]: shift, scale, gate for attention and for the MLP, before
  // each block adds its own scale_shift_table.
  at::Tensor modulation;
  // [B, dim]: the conditioning itself, for the output layer's modulation.
  at::Tensor embedded_timestep;
};

// diffusers AdaLayerNormSingle: `emb`, then SiLU and `linear` (dim -> 6 dim).
class AdaLayerNormSingleImpl : public torch::nn::Module {
 public:
  AdaLayerNormSingleImpl(int64_t dim, bool use_additional_conditions);

  AdaLayerNormSingleOutput Forward(
      const at::Tensor& timestep,
      const std::optional<PixArtMicroConditions>& conditions,
      c10::ScalarType dtype);

 private:
  PixArtAlphaCombinedTimestepSizeEmbeddings emb_;
  Linear linear_;
};
TORCH_MODULE(AdaLayerNormSingle);

// diffusers PixArtAlphaTextProjection with its default act_fn "gelu_tanh":
// linear_1 (in -> dim), tanh-approximated GELU, linear_2 (dim -> dim).
class PixArtCaptionProjectionImpl : public torch::nn::Module {
 public:
  PixArtCaptionProjectionImpl(int64_t in_features, int64_t dim);

  at::Tensor Forward(const at::Tensor& x);

 private:
  Linear linear_1_;
  Linear linear_2_;
};
TORCH_MODULE(PixArtCaptionProjection);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_FAMILIES_PIXART_PIXART_EMBEDDINGS_H_
