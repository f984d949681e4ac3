#ifndef DITSERVE_CORE_FAMILIES_SD3_JOINT_TRANSFORMER_BLOCK_H_
#define DITSERVE_CORE_FAMILIES_SD3_JOINT_TRANSFORMER_BLOCK_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "core/families/sd3/sd3_attention.h"
#include "core/models/layers/ada_layer_norm.h"
#include "core/models/layers/attention.h"
#include "core/models/layers/feed_forward.h"
#include "core/models/layers/linear.h"

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
  Linear linear_;
};
TORCH_MODULE(SD35AdaLayerNormZeroX);

// The two streams of a forward. On a shard of the sequence [image, text]
// they hold the shard's tokens: its image tokens, and its text tokens
// followed by its padding (padding rides along in the text stream; it is
// never attended to and its output is dropped).
struct SD3Streams {
  // [B, S_img, dim]
  at::Tensor image;
  // [B, S_txt, dim]; undefined after a context_pre_only block.
  at::Tensor text;
};

// Which keys the attention of a forward sees. Both unset on the whole
// sequence.
struct SD3KeyMasks {
  // Bool [B, S_img + S_txt] over the streams' [image, text] tokens, false
  // for padding. Unset: every key is visible.
  std::optional<at::Tensor> joint;
  // Set exactly on a shard: bool [B, shard tokens], true on the shard's
  // image tokens. SD3.5's attn2 attends over image tokens only, yet every
  // rank must bring keys of the shard's length to the collectives, so its
  // image stream is zero-padded to that length and all else is masked.
  std::optional<at::Tensor> image_only;
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
                            std::shared_ptr<Attention> attention);

  SD3Streams Forward(const SD3Streams& streams, const at::Tensor& temb,
                     const SD3KeyMasks& key_masks);

 private:
  // The image stream's attention input(s) and gates.
  SD35AdaLayerNormZeroXOutput ImageNorm(const at::Tensor& image,
                                        const at::Tensor& temb);
  // attn2 of the image stream's `normed2` [B, S_img, dim].
  at::Tensor ImageSelfAttention(const at::Tensor& normed2,
                                const SD3KeyMasks& key_masks);

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

#endif  // DITSERVE_CORE_FAMILIES_SD3_JOINT_TRANSFORMER_BLOCK_H_
