#ifndef DITSERVE_CORE_MODELS_LAYERS_TIMESTEP_EMBEDDINGS_H_
#define DITSERVE_CORE_MODELS_LAYERS_TIMESTEP_EMBEDDINGS_H_

// Conditioning embeddings of diffusers.models.embeddings: sinusoidal timestep
// features, their MLP, and the combinations FLUX adds pooled text to.

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "core/models/layers/linear.h"

namespace ditserve::models {

// Width of the sinusoidal timestep features FLUX, SD3 and PixArt use.
inline constexpr int64_t kTimestepFeatureChannels = 256;

// diffusers get_timestep_embedding: timesteps [N] -> [N, channels] float32,
// half sin and half cos of t * max_period^(-i / (half - frequency_shift)),
// cos first when flip_sin_to_cos. Computed in float32 like diffusers.
at::Tensor SinusoidalTimestepFeatures(const at::Tensor& timesteps,
                                      int64_t channels, bool flip_sin_to_cos,
                                      double frequency_shift);

// linear_1 (in -> dim), SiLU, linear_2 (dim -> dim).
class TimestepEmbeddingImpl : public torch::nn::Module {
 public:
  TimestepEmbeddingImpl(int64_t in_channels, int64_t dim);

  at::Tensor Forward(const at::Tensor& x);

 private:
  Linear linear_1_;
  Linear linear_2_;
};
TORCH_MODULE(TimestepEmbedding);

// diffusers PixArtAlphaTextProjection with act_fn="silu": linear_1
// (in -> dim), SiLU, linear_2 (dim -> dim).
class PixArtAlphaTextProjectionImpl : public torch::nn::Module {
 public:
  PixArtAlphaTextProjectionImpl(int64_t in_features, int64_t dim);

  at::Tensor Forward(const at::Tensor& x);

 private:
  Linear linear_1_;
  Linear linear_2_;
};
TORCH_MODULE(PixArtAlphaTextProjection);

// FLUX.1-schnell conditioning: timestep_embedder(features(t)) +
// text_embedder(pooled). Timesteps on the 0..1000 scale.
class CombinedTimestepTextProjEmbeddingsImpl : public torch::nn::Module {
 public:
  CombinedTimestepTextProjEmbeddingsImpl(int64_t dim, int64_t pooled_dim);

  at::Tensor Forward(const at::Tensor& timestep, const at::Tensor& pooled);

 private:
  TimestepEmbedding timestep_embedder_;
  PixArtAlphaTextProjection text_embedder_;
};
TORCH_MODULE(CombinedTimestepTextProjEmbeddings);

// FLUX.1-dev conditioning: as above plus guidance_embedder(features(g)).
class CombinedTimestepGuidanceTextProjEmbeddingsImpl
    : public torch::nn::Module {
 public:
  CombinedTimestepGuidanceTextProjEmbeddingsImpl(int64_t dim,
                                                 int64_t pooled_dim);

  at::Tensor Forward(const at::Tensor& timestep, const at::Tensor& guidance,
                     const at::Tensor& pooled);

 private:
  TimestepEmbedding timestep_embedder_;
  TimestepEmbedding guidance_embedder_;
  PixArtAlphaTextProjection text_embedder_;
};
TORCH_MODULE(CombinedTimestepGuidanceTextProjEmbeddings);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_LAYERS_TIMESTEP_EMBEDDINGS_H_
