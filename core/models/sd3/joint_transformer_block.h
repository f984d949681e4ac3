#ifndef DITSERVE_CORE_MODELS_SD3_JOINT_TRANSFORMER_BLOCK_H_
#define DITSERVE_CORE_MODELS_SD3_JOINT_TRANSFORMER_BLOCK_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>

#include "core/models/layers/ada_layer_norm.h"
#include "core/models/layers/feed_forward.h"
#include "core/models/sd3/sd3_attention.h"
#include "core/parallel/attention.h"

namespace ditserve::models {

struct SD35AdaLayerNormZeroXOutput {
  // norm(x) modulated for the joint attention and for attn2, [B, S, dim].
  at::Tensor normed;
  at::Tensor normed2;
  // [B, dim] each.
  at::Tensor gate_msa;
  at::Tensor shift_mlp;
  at::Tensor scale_mlp;
  at::Tensor gate_mlp;
  at::Tensor gate_msa2;
};

// diffusers SD35AdaLayerNormZeroX: linear dim -> 9 dim (AdaLayerNormZero's
// six vectors plus shift, scale, gate of the second attention).
class SD35AdaLayerNormZeroXImpl : public torch::nn::Module {
 public:
  explicit SD35AdaLayerNormZeroXImpl(int64_t dim);

  SD35AdaLayerNormZeroXOutput Forward(const at::Tensor& x,
                                      const at::Tensor& embedding);

 private:
  torch::nn::Linear linear_;
};
TORCH_MODULE(SD35AdaLayerNormZeroX);

struct SD3Streams {
  // [B, S_img, dim]
  at::Tensor image;
  // [B, S_txt, dim]; undefined after a context_pre_only block.
  at::Tensor text;
};

// diffusers JointTransformerBlock: image and text streams with their own
// modulation and MLPs meet in one joint attention. The last block of the
// model is context_pre_only: its text stream only feeds the attention (no
// output projection, no MLP). With dual attention (SD3.5) the image stream
// also runs a self-attention (attn2) of its own.
class JointTransformerBlockImpl : public torch::nn::Module {
 public:
  JointTransformerBlockImpl(int64_t dim, int64_t heads, int64_t head_dim,
                            bool context_pre_only, bool qk_norm,
                            bool use_dual_attention,
                            std::shared_ptr<parallel::Attention> attention);

  SD3Streams Forward(const SD3Streams& streams, const at::Tensor& temb);

 private:
  // The image stream's attention input(s) and gates.
  SD35AdaLayerNormZeroXOutput ImageNorm(const at::Tensor& image,
                                        const at::Tensor& temb);

  bool context_pre_only_;
  bool use_dual_attention_;
  AdaLayerNormZero norm1_{nullptr};
  SD35AdaLayerNormZeroX norm1_dual_{nullptr};
  AdaLayerNormZero norm1_context_{nullptr};
  AdaLayerNormContinuous norm1_context_pre_only_{nullptr};
  SD3Attention attn_{nullptr};
  SD3Attention attn2_{nullptr};
  FeedForward ff_{nullptr};
  FeedForward ff_context_{nullptr};
};
TORCH_MODULE(JointTransformerBlock);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_SD3_JOINT_TRANSFORMER_BLOCK_H_
