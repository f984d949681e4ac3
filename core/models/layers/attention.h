#ifndef DITSERVE_CORE_MODELS_LAYERS_ATTENTION_H_
#define DITSERVE_CORE_MODELS_LAYERS_ATTENTION_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

namespace ditserve::models {

struct AttentionResult {
  // [B, H, S_q, D]: in the dtype of q. With the log-sum-exp, float32 from the
  // math path, because a ring merges the pieces in float32 and a piece
  // rounded to bfloat16 first adds one rounding per ring step; a GPU's fused
  // kernels round it to q's dtype, which their speed outweighs.
  at::Tensor output;
  // [B, H, S_q] float32: log(sum(exp(scores))) over the keys, what a ring of
  // partial attentions needs to merge its pieces. Undefined unless requested.
  at::Tensor log_sum_exp;
};

// softmax(q k^T * scale + mask) v for q [B, H, S_q, D], k and v [B, H, S_k, D].
// `mask` broadcasts to [B, H, S_q, S_k]: bool (true = attend) or an additive
// float bias. Scores and softmax are computed in float32 whatever the input
// dtype. On LibTorch >= 2.1, when the log-sum-exp is not requested, this is
// the fused scaled_dot_product_attention. With the log-sum-exp, on a GPU
// without a mask, the flash or memory-efficient kernel that
// scaled_dot_product_attention would pick (LibTorch with ATen/SDPBackend.h,
// 2.6 and 2.11 among them); otherwise MathAttention with kMaxScoreBytes.
AttentionResult ScaledDotProductAttention(const at::Tensor& q,
                                          const at::Tensor& k,
                                          const at::Tensor& v,
                                          const std::optional<at::Tensor>& mask,
                                          double scale,
                                          bool return_log_sum_exp);

// The float32 scores a MathAttention call holds at once: a video's 17,776
// tokens (CogVideoX at 720x480, 49 frames) or a 1536² VAE's 36,864 would
// need 1.3 and 5.4 GB per head for the whole S_q x S_k matrix.
inline constexpr int64_t kMaxScoreBytes = int64_t{256} << 20;

// The attention of ScaledDotProductAttention by plain matrix products in
// float32, over chunks of query rows whose scores fit in `max_score_bytes`
// (at least one row per chunk). Each query's softmax sees all of its keys at
// once, so chunking changes no value; only peak memory.
AttentionResult MathAttention(const at::Tensor& q, const at::Tensor& k,
                              const at::Tensor& v,
                              const std::optional<at::Tensor>& mask,
                              double scale, bool return_log_sum_exp,
                              int64_t max_score_bytes);

// How a model attends over a sequence that may be split across ranks. Models
// hold one and call it for every attention layer; the implementation decides
// whether that is local math, an all-to-all over heads (Ulysses), a ring of
// K/V exchanges (Ring) or both, so the model code never changes.
// The implementations live in core/parallel, above models.
class Attention {
 public:
  virtual ~Attention() = default;

  // q, k, v: [B, H, S, D], the tokens this rank holds. key_mask: optional
  // bool [B, S_k] over the same keys, true = attend (padding is false).
  // Returns softmax(q k^T / sqrt(D)) v over the whole sequence for this
  // rank's queries, [B, H, S, D].
  virtual at::Tensor Attend(const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v,
                            const std::optional<at::Tensor>& key_mask) = 0;
};

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_LAYERS_ATTENTION_H_
