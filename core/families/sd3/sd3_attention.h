#ifndef DITSERVE_CORE_FAMILIES_SD3_SD3_ATTENTION_H_
#define DITSERVE_CORE_FAMILIES_SD3_SD3_ATTENTION_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "core/models/layers/attention.h"
#include "core/models/layers/linear.h"
#include "core/models/layers/rms_norm.h"

namespace ditserve::models {

struct SD3JointAttentionOutput {
  // [B, S_img, dim] after to_out.0.
  at::Tensor image;
  // [B, S_txt, dim] after to_add_out; undefined when context_pre_only.
  at::Tensor text;
};

// diffusers Attention as SD3's blocks build it, attention through
// Attention. Two forms:
//  - joint (JointAttnProcessor2_0, `attn`): add_{q,k,v}_proj for the text
//    stream, attention over [image, text]; the text output goes through
//    to_add_out unless context_pre_only (the last block drops it);
//  - self (AttnProcessor2_0, SD3.5's `attn2`): image stream only.
// With qk_norm (SD3.5) q and k of each stream get a per-head RMSNorm
// (eps 1e-6): norm_q / norm_k, norm_added_q / norm_added_k.
class SD3AttentionImpl : public torch::nn::Module {
 public:
  enum class Kind { kJoint, kJointContextPreOnly, kSelf };

  SD3AttentionImpl(Kind kind, int64_t dim, int64_t heads, int64_t head_dim,
                   bool qk_norm, std::shared_ptr<Attention> attention);

  // `key_mask`: bool [B, S_img + S_txt] over [image, text], true = attend
  // (see Attention).
  SD3JointAttentionOutput ForwardJoint(
      const at::Tensor& image, const at::Tensor& text,
      const std::optional<at::Tensor>& key_mask);

  at::Tensor ForwardSelf(const at::Tensor& x,
                         const std::optional<at::Tensor>& key_mask);

 private:
  // x [B, S, dim] -> heads [B, H, S, D], normalised when `norm` is defined.
  at::Tensor Heads(const at::Tensor& x, Linear& projection,
                   RMSNorm& norm) const;
  // [B, H, S, D] -> [B, S, H * D].
  static at::Tensor MergeHeads(const at::Tensor& x);

  int64_t heads_;
  int64_t head_dim_;
  std::shared_ptr<Attention> attention_;
  Linear to_q_{nullptr};
  Linear to_k_{nullptr};
  Linear to_v_{nullptr};
  Linear to_out_{nullptr};
  RMSNorm norm_q_{nullptr};
  RMSNorm norm_k_{nullptr};
  Linear add_q_proj_{nullptr};
  Linear add_k_proj_{nullptr};
  Linear add_v_proj_{nullptr};
  Linear to_add_out_{nullptr};
  RMSNorm norm_added_q_{nullptr};
  RMSNorm norm_added_k_{nullptr};
};
TORCH_MODULE(SD3Attention);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_FAMILIES_SD3_SD3_ATTENTION_H_
