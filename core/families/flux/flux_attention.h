#ifndef DITSERVE_CORE_FAMILIES_FLUX_FLUX_ATTENTION_H_
#define DITSERVE_CORE_FAMILIES_FLUX_FLUX_ATTENTION_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "core/models/layers/attention.h"
#include "core/models/layers/linear.h"
#include "core/models/layers/rms_norm.h"
#include "core/models/layers/rotary_embedding.h"

namespace ditserve::models {

// The tokens one forward runs on, as every attention layer sees them: the
// whole joint sequence, or one rank's shard of it under sequence
// parallelism.
struct FluxSequence {
  // RoPE rows of the tokens, in their order ([text, image], then padding).
  RotaryTables rotary;
  // Bool [B, S]: false for keys no query may attend to (padding); nullopt
  // when every key is visible.
  std::optional<at::Tensor> key_mask;
};

struct FluxJointAttentionOutput {
  // [B, S_img, dim] after to_out.0.
  at::Tensor image;
  // [B, S_txt, dim] after to_add_out.
  at::Tensor text;
};

// diffusers FluxAttention with FluxAttnProcessor: q/k/v projections with a
// per-head RMSNorm (eps 1e-6) on q and k, RoPE, attention through
// Attention. Two forms:
//  - joint (double-stream blocks): add_{q,k,v}_proj and norm_added_{q,k} for
//    the text stream, attention over [text, image], outputs through to_out.0
//    and to_add_out;
//  - pre_only (single-stream blocks): one stream, no output projection.
class FluxAttentionImpl : public torch::nn::Module {
 public:
  enum class Kind { kJoint, kPreOnly };

  FluxAttentionImpl(Kind kind, int64_t dim, int64_t heads, int64_t head_dim,
                    std::shared_ptr<Attention> attention);

  // Joint form. `sequence` covers the tokens of [text, image].
  FluxJointAttentionOutput ForwardJoint(const at::Tensor& image,
                                        const at::Tensor& text,
                                        const FluxSequence& sequence);

  // Pre-only form: x [B, S, dim] -> [B, S, heads * head_dim].
  at::Tensor ForwardPreOnly(const at::Tensor& x, const FluxSequence& sequence);

 private:
  // x [B, S, dim] -> normalised heads [B, S, H, D]: joined and rotated in
  // this layout, where each token's heads are one contiguous row.
  at::Tensor Heads(const at::Tensor& x, Linear& projection,
                   RMSNorm* norm) const;
  // Rotated q, k and v [B, S, H, D] attended -> [B, S, H * D].
  at::Tensor Attend(const at::Tensor& q, const at::Tensor& k,
                    const at::Tensor& v, const FluxSequence& sequence);

  int64_t heads_;
  int64_t head_dim_;
  std::shared_ptr<Attention> attention_;
  Linear to_q_{nullptr};
  Linear to_k_{nullptr};
  Linear to_v_{nullptr};
  RMSNorm norm_q_{nullptr};
  RMSNorm norm_k_{nullptr};
  Linear to_out_{nullptr};
  Linear add_q_proj_{nullptr};
  Linear add_k_proj_{nullptr};
  Linear add_v_proj_{nullptr};
  RMSNorm norm_added_q_{nullptr};
  RMSNorm norm_added_k_{nullptr};
  Linear to_add_out_{nullptr};
};
TORCH_MODULE(FluxAttention);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_FAMILIES_FLUX_FLUX_ATTENTION_H_
