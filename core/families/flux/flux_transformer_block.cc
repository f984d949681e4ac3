#include "core/families/flux/flux_transformer_block.h"

#include <torch/torch.h>

#include <limits>
#include <utility>

namespace ditserve::models {
namespace {

constexpr int64_t kMlpRatio = 4;
// The un-affine LayerNorms before the MLPs (norm2, norm2_context).
constexpr double kMlpNormEps = 1e-6;

at::Tensor Gated(const at::Tensor& gate, const at::Tensor& x) {
  return gate.unsqueeze(1) * x;
}

// One stream's MLP half: residual + gate * ff(norm(x) * (1 + scale) + shift).
at::Tensor MlpResidual(const at::Tensor& x, const AdaLayerNormZeroOutput& mod,
                       FeedForward& ff) {
  const at::Tensor normed =
      PlainLayerNorm(x, kMlpNormEps) * (1 + mod.scale_mlp.unsqueeze(1)) +
      mod.shift_mlp.unsqueeze(1);
  return x + Gated(mod.gate_mlp, ff->Forward(normed));
}

}  // namespace

at::Tensor ClipToFloat16Range(const at::Tensor& stream) {
  if (stream.scalar_type() != at::kHalf) return stream;
  // A float16 beyond ±largest is ±inf, so clamping replaces just those (and
  // leaves NaN, as clamp does); LibTorch 1.13 has no float16 clamp on a CPU.
  const double largest = std::numeric_limits<c10::Half>::max();
  const double infinity = std::numeric_limits<double>::infinity();
  return stream.masked_fill(stream == infinity, largest)
      .masked_fill(stream == -infinity, -largest);
}

FluxTransformerBlockImpl::FluxTransformerBlockImpl(
    int64_t dim, int64_t heads, int64_t head_dim,
    std::shared_ptr<Attention> attention)
    : norm1_(register_module("norm1", AdaLayerNormZero(dim))),
      norm1_context_(register_module("norm1_context", AdaLayerNormZero(dim))),
      attn_(register_module(
          "attn", FluxAttention(FluxAttentionImpl::Kind::kJoint, dim, heads,
                                head_dim, std::move(attention)))),
      ff_(register_module("ff", FeedForward(dim, dim, kMlpRatio))),
      ff_context_(
          register_module("ff_context", FeedForward(dim, dim, kMlpRatio))) {}

FluxStreams FluxTransformerBlockImpl::Forward(const FluxStreams& streams,
                                              const at::Tensor& temb,
                                              const FluxSequence& sequence) {
  const AdaLayerNormZeroOutput image_mod = norm1_->Forward(streams.image, temb);
  const AdaLayerNormZeroOutput text_mod =
      norm1_context_->Forward(streams.text, temb);
  const FluxJointAttentionOutput attended =
      attn_->ForwardJoint(image_mod.normed, text_mod.normed, sequence);
  const at::Tensor image =
      streams.image + Gated(image_mod.gate_msa, attended.image);
  const at::Tensor text =
      streams.text + Gated(text_mod.gate_msa, attended.text);
  return {MlpResidual(image, image_mod, ff_),
          ClipToFloat16Range(MlpResidual(text, text_mod, ff_context_))};
}

FluxSingleTransformerBlockImpl::FluxSingleTransformerBlockImpl(
    int64_t dim, int64_t heads, int64_t head_dim,
    std::shared_ptr<Attention> attention)
    : norm_(register_module("norm", AdaLayerNormZeroSingle(dim))),
      proj_mlp_(register_module("proj_mlp", Linear(dim, kMlpRatio * dim))),
      proj_out_(
          register_module("proj_out", Linear(dim + kMlpRatio * dim, dim))),
      attn_(register_module(
          "attn", FluxAttention(FluxAttentionImpl::Kind::kPreOnly, dim, heads,
                                head_dim, std::move(attention)))) {}

FluxStreams FluxSingleTransformerBlockImpl::Forward(
    const FluxStreams& streams, const at::Tensor& temb,
    const FluxSequence& sequence) {
  const int64_t text_tokens = streams.text.size(1);
  const at::Tensor residual = at::cat({streams.text, streams.image}, /*dim=*/1);
  const AdaLayerNormZeroSingleOutput mod = norm_->Forward(residual, temb);
  const at::Tensor mlp =
      at::gelu(proj_mlp_->forward(mod.normed), /*approximate=*/"tanh");
  const at::Tensor attended = attn_->ForwardPreOnly(mod.normed, sequence);
  const at::Tensor out = ClipToFloat16Range(
      residual +
      Gated(mod.gate, proj_out_->forward(at::cat({attended, mlp}, /*dim=*/2))));
  return {out.slice(1, text_tokens), out.slice(1, 0, text_tokens)};
}

}  // namespace ditserve::models
