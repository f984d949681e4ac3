#include "core/models/layers/attention.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <limits>

namespace ditserve::models {
namespace {

// The plain math of the attention, float32 throughout.
AttentionResult MathAttention(const at::Tensor& q, const at::Tensor& k,
                              const at::Tensor& v,
                              const std::optional<at::Tensor>& mask,
                              double scale, bool return_log_sum_exp) {
  at::Tensor scores =
      at::matmul(q.to(at::kFloat), k.to(at::kFloat).transpose(-2, -1)) * scale;
  if (mask.has_value()) {
    if (mask->scalar_type() == at::kBool) {
      scores = scores.masked_fill(mask->logical_not(),
                                  -std::numeric_limits<float>::infinity());
    } else {
      scores = scores + mask->to(at::kFloat);
    }
  }
  AttentionResult result;
  if (return_log_sum_exp) result.log_sum_exp = at::logsumexp(scores, -1);
  result.output =
      at::matmul(at::softmax(scores, -1), v.to(at::kFloat)).to(q.scalar_type());
  return result;
}

}  // namespace

AttentionResult ScaledDotProductAttention(const at::Tensor& q,
                                          const at::Tensor& k,
                                          const at::Tensor& v,
                                          const std::optional<at::Tensor>& mask,
                                          double scale,
                                          bool return_log_sum_exp) {
#if TORCH_VERSION_MAJOR > 2 || \
    (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  // The fused kernels do not hand out the log-sum-exp through this API.
  if (!return_log_sum_exp) {
    return {at::scaled_dot_product_attention(q, k, v, mask, /*dropout_p=*/0.0,
                                             /*is_causal=*/false, scale),
            at::Tensor()};
  }
#endif
  return MathAttention(q, k, v, mask, scale, return_log_sum_exp);
}

}  // namespace ditserve::models
