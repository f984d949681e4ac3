#include "core/families/sd3/joint_transformer_block.h"

#include <torch/torch.h>

#include <vector>

#include "core/models/sequence_shard.h"

namespace ditserve::models {
namespace {

// SD3's block norms: LayerNorm(elementwise_affine=False, eps=1e-6).
constexpr double kNormEps = 1e-6;
constexpr int64_t kFeedForwardMult = 4;

// x * (1 + scale) + shift with [B, dim] modulation broadcast over tokens.
at::Tensor Modulate(const at::Tensor& x, const at::Tensor& shift,
                    const at::Tensor& scale) {
  return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1);
}

}  // namespace

SD35AdaLayerNormZeroXImpl::SD35AdaLayerNormZeroXImpl(int64_t dim)
    : linear_(register_module("linear", Linear(dim, 9 * dim))) {}

SD35AdaLayerNormZeroXOutput SD35AdaLayerNormZeroXImpl::Forward(
    const at::Tensor& x, const at::Tensor& embedding) {
  const std::vector<at::Tensor> parts =
      linear_->forward(at::silu(embedding)).chunk(9, /*dim=*/1);
  const at::Tensor normed = PlainLayerNorm(x, kNormEps);
  return {Modulate(normed, parts[0], parts[1]),
          Modulate(normed, parts[6], parts[7]),
          parts[2],
          parts[3],
          parts[4],
          parts[5],
          parts[8]};
}

JointTransformerBlockImpl::JointTransformerBlockImpl(
    int64_t dim, int64_t heads, int64_t head_dim, bool context_pre_only,
    bool qk_norm, bool use_dual_attention, std::shared_ptr<Attention> attention)
    : context_pre_only_(context_pre_only),
      use_dual_attention_(use_dual_attention) {
  if (use_dual_attention) {
    norm1_dual_ = register_module("norm1", SD35AdaLayerNormZeroX(dim));
  } else {
    norm1_ = register_module("norm1", AdaLayerNormZero(dim));
  }
  if (context_pre_only) {
    norm1_context_pre_only_ = register_module(
        "norm1_context", AdaLayerNormContinuous(dim, dim, kNormEps));
  } else {
    norm1_context_ = register_module("norm1_context", AdaLayerNormZero(dim));
  }
  attn_ = register_module(
      "attn", SD3Attention(context_pre_only
                               ? SD3AttentionImpl::Kind::kJointContextPreOnly
                               : SD3AttentionImpl::Kind::kJoint,
                           dim, heads, head_dim, qk_norm, attention));
  if (use_dual_attention) {
    attn2_ = register_module(
        "attn2", SD3Attention(SD3AttentionImpl::Kind::kSelf, dim, heads,
                              head_dim, qk_norm, attention));
  }
  ff_ = register_module("ff", FeedForward(dim, dim, kFeedForwardMult));
  if (!context_pre_only) {
    ff_context_ =
        register_module("ff_context", FeedForward(dim, dim, kFeedForwardMult));
  }
}

SD35AdaLayerNormZeroXOutput JointTransformerBlockImpl::ImageNorm(
    const at::Tensor& image, const at::Tensor& temb) {
  if (use_dual_attention_) return norm1_dual_->Forward(image, temb);
  AdaLayerNormZeroOutput zero = norm1_->Forward(image, temb);
  SD35AdaLayerNormZeroXOutput out;
  out.normed = zero.normed;
  out.gate_msa = zero.gate_msa;
  out.shift_mlp = zero.shift_mlp;
  out.scale_mlp = zero.scale_mlp;
  out.gate_mlp = zero.gate_mlp;
  return out;
}

at::Tensor JointTransformerBlockImpl::ImageSelfAttention(
    const at::Tensor& normed2, const SD3KeyMasks& key_masks) {
  if (!key_masks.image_only.has_value()) {
    return attn2_->ForwardSelf(normed2, std::nullopt);
  }
  const int64_t image_tokens = normed2.size(1);
  const at::Tensor padded =
      PadTokens(normed2, 0, key_masks.image_only->size(1) - image_tokens);
  return attn2_->ForwardSelf(padded, key_masks.image_only)
      .narrow(1, 0, image_tokens);
}

SD3Streams JointTransformerBlockImpl::Forward(const SD3Streams& streams,
                                              const at::Tensor& temb,
                                              const SD3KeyMasks& key_masks) {
  const SD35AdaLayerNormZeroXOutput image_norm = ImageNorm(streams.image, temb);
  AdaLayerNormZeroOutput text_norm;
  if (context_pre_only_) {
    text_norm.normed = norm1_context_pre_only_->Forward(streams.text, temb);
  } else {
    text_norm = norm1_context_->Forward(streams.text, temb);
  }
  const SD3JointAttentionOutput attended =
      attn_->ForwardJoint(image_norm.normed, text_norm.normed, key_masks.joint);

  SD3Streams out;
  out.image = streams.image + image_norm.gate_msa.unsqueeze(1) * attended.image;
  if (use_dual_attention_) {
    out.image =
        out.image + image_norm.gate_msa2.unsqueeze(1) *
                        ImageSelfAttention(image_norm.normed2, key_masks);
  }
  const at::Tensor mlp_input =
      Modulate(PlainLayerNorm(out.image, kNormEps), image_norm.shift_mlp,
               image_norm.scale_mlp);
  out.image =
      out.image + image_norm.gate_mlp.unsqueeze(1) * ff_->Forward(mlp_input);
  if (context_pre_only_) return out;

  out.text = streams.text + text_norm.gate_msa.unsqueeze(1) * attended.text;
  const at::Tensor context_mlp_input =
      Modulate(PlainLayerNorm(out.text, kNormEps), text_norm.shift_mlp,
               text_norm.scale_mlp);
  out.text = out.text + text_norm.gate_mlp.unsqueeze(1) *
                            ff_context_->Forward(context_mlp_input);
  return out;
}

}  // namespace ditserve::models
