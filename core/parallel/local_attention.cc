#include "core/parallel/local_attention.h"

#include <torch/torch.h>

#include <cmath>

#include "core/models/layers/attention.h"

namespace ditserve::parallel {

at::Tensor LocalAttention::Attend(const at::Tensor& q, const at::Tensor& k,
                                  const at::Tensor& v,
                                  const std::optional<at::Tensor>& key_mask) {
  std::optional<at::Tensor> mask;
  if (key_mask.has_value()) {
    // [B, S_k] -> [B, 1, 1, S_k]: the same keys are hidden from every head
    // and query.
    mask = key_mask->to(at::kBool).unsqueeze(1).unsqueeze(1);
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  return models::ScaledDotProductAttention(q, k, v, mask, scale,
                                           /*return_log_sum_exp=*/false)
      .output;
}

}  // namespace ditserve::parallel
