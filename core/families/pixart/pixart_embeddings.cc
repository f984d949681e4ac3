#include "core/families/pixart/pixart_embeddings.h"

#include <torch/torch.h>

#include "core/models/layers/sincos_position_table.h"

namespace ditserve::models {
namespace {

// Timesteps and micro-conditions share diffusers' Timesteps(256,
// flip_sin_to_cos=True, downscale_freq_shift=0) projection.
at::Tensor ConditionFeatures(const at::Tensor& values, c10::ScalarType dtype) {
  return SinusoidalTimestepFeatures(values, kTimestepFeatureChannels,
                                    /*flip_sin_to_cos=*/true,
                                    /*frequency_shift=*/0.0)
      .to(dtype);
}

}  // namespace

PixArtPatchEmbedImpl::PixArtPatchEmbedImpl(int64_t in_channels, int64_t dim,
                                           int64_t patch_size, double base_size,
                                           double interpolation_scale)
    : dim_(dim),
      base_size_(base_size),
      interpolation_scale_(interpolation_scale),
      proj_(register_module(
          "proj", Conv2d(torch::nn::Conv2dOptions(in_channels, dim, patch_size)
                             .stride(patch_size)))) {}

at::Tensor PixArtPatchEmbedImpl::Forward(const at::Tensor& latent) {
  const at::Tensor patches = proj_->forward(latent);
  const at::Tensor table = table_.Get(
      std::make_tuple(patches.size(2), patches.size(3), patches.device()), [&] {
        return SincosPositionTable2d(dim_, patches.size(2), patches.size(3),
                                     base_size_, interpolation_scale_)
            .to(patches.device());
      });
  return (patches.flatten(2).transpose(1, 2) + table.unsqueeze(0))
      .to(patches.scalar_type());
}

PixArtAlphaCombinedTimestepSizeEmbeddingsImpl::
    PixArtAlphaCombinedTimestepSizeEmbeddingsImpl(
        int64_t dim, bool use_additional_conditions)
    : use_additional_conditions_(use_additional_conditions),
      timestep_embedder_(
          register_module("timestep_embedder",
                          TimestepEmbedding(kTimestepFeatureChannels, dim))) {
  if (!use_additional_conditions) return;
  resolution_embedder_ =
      register_module("resolution_embedder",
                      TimestepEmbedding(kTimestepFeatureChannels, dim / 3));
  aspect_ratio_embedder_ =
      register_module("aspect_ratio_embedder",
                      TimestepEmbedding(kTimestepFeatureChannels, dim / 3));
}

at::Tensor PixArtAlphaCombinedTimestepSizeEmbeddingsImpl::Forward(
    const at::Tensor& timestep,
    const std::optional<PixArtMicroConditions>& conditions,
    c10::ScalarType dtype) {
  const at::Tensor time_embedding =
      timestep_embedder_->Forward(ConditionFeatures(timestep, dtype));
  if (!use_additional_conditions_) return time_embedding;
  const int64_t batch = timestep.size(0);
  // Height and width are embedded one by one and laid side by side.
  const at::Tensor resolution =
      resolution_embedder_
          ->Forward(ConditionFeatures(conditions->resolution.flatten(), dtype))
          .reshape({batch, -1});
  const at::Tensor aspect_ratio =
      aspect_ratio_embedder_
          ->Forward(
              ConditionFeatures(conditions->aspect_ratio.flatten(), dtype))
          .reshape({batch, -1});
  return time_embedding + at::cat({resolution, aspect_ratio}, /*dim=*/1);
}

AdaLayerNormSingleImpl::AdaLayerNormSingleImpl(int64_t dim,
                                               bool use_additional_conditions)
    : emb_(register_module("emb", PixArtAlphaCombinedTimestepSizeEmbeddings(
                                      dim, use_additional_conditions))),
      linear_(register_module("linear", Linear(dim, 6 * dim))) {}

AdaLayerNormSingleOutput AdaLayerNormSingleImpl::Forward(
    const at::Tensor& timestep,
    const std::optional<PixArtMicroConditions>& conditions,
    c10::ScalarType dtype) {
  at::Tensor embedded = emb_->Forward(timestep, conditions, dtype);
  return {linear_->forward(at::silu(embedded)), embedded};
}

PixArtCaptionProjectionImpl::PixArtCaptionProjectionImpl(int64_t in_features,
                                                         int64_t dim)
    : linear_1_(register_module("linear_1", Linear(in_features, dim))),
      linear_2_(register_module("linear_2", Linear(dim, dim))) {}

at::Tensor PixArtCaptionProjectionImpl::Forward(const at::Tensor& x) {
  return linear_2_->forward(at::gelu(linear_1_->forward(x), "tanh"));
}

}  // namespace ditserve::models
