#include "core/models/layers/timestep_embeddings.h"

#include <torch/torch.h>

#include <cmath>

namespace ditserve::models {
namespace {

constexpr double kMaxPeriod = 10000.0;

// The features FLUX feeds its embedders: 256 channels, cos first, no shift.
at::Tensor FluxTimestepFeatures(const at::Tensor& timesteps,
                                const at::Tensor& like) {
  return SinusoidalTimestepFeatures(timesteps, kTimestepFeatureChannels,
                                    /*flip_sin_to_cos=*/true,
                                    /*frequency_shift=*/0.0)
      .to(like.scalar_type());
}

}  // namespace

at::Tensor SinusoidalTimestepFeatures(const at::Tensor& timesteps,
                                      int64_t channels, bool flip_sin_to_cos,
                                      double frequency_shift) {
  const int64_t half = channels / 2;
  // Same operation order as diffusers so float32 rounding matches.
  at::Tensor exponent =
      -std::log(kMaxPeriod) *
      at::arange(0, half, timesteps.options().dtype(at::kFloat));
  exponent = exponent / (static_cast<double>(half) - frequency_shift);
  const at::Tensor angles =
      timesteps.unsqueeze(1).to(at::kFloat) * at::exp(exponent).unsqueeze(0);
  if (flip_sin_to_cos) return at::cat({at::cos(angles), at::sin(angles)}, -1);
  return at::cat({at::sin(angles), at::cos(angles)}, -1);
}

TimestepEmbeddingImpl::TimestepEmbeddingImpl(int64_t in_channels, int64_t dim)
    : linear_1_(register_module("linear_1", Linear(in_channels, dim))),
      linear_2_(register_module("linear_2", Linear(dim, dim))) {}

at::Tensor TimestepEmbeddingImpl::Forward(const at::Tensor& x) {
  return linear_2_->forward(at::silu(linear_1_->forward(x)));
}

PixArtAlphaTextProjectionImpl::PixArtAlphaTextProjectionImpl(
    int64_t in_features, int64_t dim)
    : linear_1_(register_module("linear_1", Linear(in_features, dim))),
      linear_2_(register_module("linear_2", Linear(dim, dim))) {}

at::Tensor PixArtAlphaTextProjectionImpl::Forward(const at::Tensor& x) {
  return linear_2_->forward(at::silu(linear_1_->forward(x)));
}

CombinedTimestepTextProjEmbeddingsImpl::CombinedTimestepTextProjEmbeddingsImpl(
    int64_t dim, int64_t pooled_dim)
    : timestep_embedder_(
          register_module("timestep_embedder",
                          TimestepEmbedding(kTimestepFeatureChannels, dim))),
      text_embedder_(register_module(
          "text_embedder", PixArtAlphaTextProjection(pooled_dim, dim))) {}

at::Tensor CombinedTimestepTextProjEmbeddingsImpl::Forward(
    const at::Tensor& timestep, const at::Tensor& pooled) {
  const at::Tensor time_embedding =
      timestep_embedder_->Forward(FluxTimestepFeatures(timestep, pooled));
  return time_embedding + text_embedder_->Forward(pooled);
}

CombinedTimestepGuidanceTextProjEmbeddingsImpl::
    CombinedTimestepGuidanceTextProjEmbeddingsImpl(int64_t dim,
                                                   int64_t pooled_dim)
    : timestep_embedder_(
          register_module("timestep_embedder",
                          TimestepEmbedding(kTimestepFeatureChannels, dim))),
      guidance_embedder_(
          register_module("guidance_embedder",
                          TimestepEmbedding(kTimestepFeatureChannels, dim))),
      text_embedder_(register_module(
          "text_embedder", PixArtAlphaTextProjection(pooled_dim, dim))) {}

at::Tensor CombinedTimestepGuidanceTextProjEmbeddingsImpl::Forward(
    const at::Tensor& timestep, const at::Tensor& guidance,
    const at::Tensor& pooled) {
  const at::Tensor time_embedding =
      timestep_embedder_->Forward(FluxTimestepFeatures(timestep, pooled));
  const at::Tensor guidance_embedding =
      guidance_embedder_->Forward(FluxTimestepFeatures(guidance, pooled));
  return (time_embedding + guidance_embedding) +
         text_embedder_->Forward(pooled);
}

}  // namespace ditserve::models
