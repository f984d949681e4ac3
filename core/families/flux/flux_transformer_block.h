#ifndef DITSERVE_CORE_FAMILIES_FLUX_FLUX_TRANSFORMER_BLOCK_H_
#define DITSERVE_CORE_FAMILIES_FLUX_FLUX_TRANSFORMER_BLOCK_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>

#include "core/families/flux/flux_attention.h"
#include "core/models/layers/ada_layer_norm.h"
#include "core/models/layers/attention.h"
#include "core/models/layers/feed_forward.h"
#include "core/models/layers/linear.h"

namespace ditserve::models {

// The two streams of a forward. On a shard of the joint sequence they hold
// the shard's tokens: its text tokens, and its image tokens followed by its
// padding (padding rides along in the image stream; it is never attended to
// and its output is dropped).
struct FluxStreams {
  // [B, S_img, dim]
  at::Tensor image;
  // [B, S_txt, dim]
  at::Tensor text;
};

// `stream` clamped to float16's finite range when it is float16, else as
// it is: FLUX's residual streams outgrow float16 on real weights, and an
// infinity would turn into NaN at the next LayerNorm. diffusers clamps the
// double blocks' text output and the single blocks' output so.
at::Tensor ClipToFloat16Range(const at::Tensor& stream);

// Double-stream block (diffusers FluxTransformerBlock): image and text keep
// separate modulation and MLPs and meet in one joint attention.
class FluxTransformerBlockImpl : public torch::nn::Module {
 public:
  FluxTransformerBlockImpl(int64_t dim, int64_t heads, int64_t head_dim,
                           std::shared_ptr<Attention> attention);

  FluxStreams Forward(const FluxStreams& streams, const at::Tensor& temb,
                      const FluxSequence& sequence);

 private:
  AdaLayerNormZero norm1_;
  AdaLayerNormZero norm1_context_;
  FluxAttention attn_;
  FeedForward ff_;
  FeedForward ff_context_;
};
TORCH_MODULE(FluxTransformerBlock);

// Single-stream block (diffusers FluxSingleTransformerBlock): one sequence
// [text, image]; attention and a 4x MLP run in parallel and are fused by
// proj_out.
class FluxSingleTransformerBlockImpl : public torch::nn::Module {
 public:
  FluxSingleTransformerBlockImpl(int64_t dim, int64_t heads, int64_t head_dim,
                                 std::shared_ptr<Attention> attention);

  FluxStreams Forward(const FluxStreams& streams, const at::Tensor& temb,
                      const FluxSequence& sequence);

 private:
  AdaLayerNormZeroSingle norm_;
  Linear proj_mlp_;
  Linear proj_out_;
  FluxAttention attn_;
};
TORCH_MODULE(FluxSingleTransformerBlock);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_FAMILIES_FLUX_FLUX_TRANSFORMER_BLOCK_H_
