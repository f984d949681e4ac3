#include "core/parallel/attention_accumulator.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "core/models/layers/attention.h"

namespace ditserve::parallel {

AttentionAccumulator::AttentionAccumulator(const at::Tensor& q)
    : q_(q),
      output_(at::zeros(q.sizes(), q.options().dtype(at::kFloat))),
      log_sum_exp_(at::full({q.size(0), q.size(1), q.size(2)},
                            -std::numeric_limits<float>::infinity(),
                            q.options().dtype(at::kFloat))) {}

void AttentionAccumulator::AddBlock(const at::Tensor& k, const at::Tensor& v,
                                    const std::optional<at::Tensor>& key_mask) {
  std::optional<at::Tensor> mask;
  if (key_mask.has_value()) {
    mask = key_mask->to(at::kBool).unsqueeze(1).unsqueeze(1);
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(q_.size(-1)));
  models::AttentionResult block = models::ScaledDotProductAttention(
      q_, k, v, mask, scale, /*return_log_sum_exp=*/true);
  const at::Tensor block_lse = block.log_sum_exp;
  // A query that sees no key in this block has a softmax of NaNs and a
  // log-sum-exp of -inf; its weight below is exactly 0, and 0 * NaN must not
  // poison the sum. (masked_fill takes the 0 as a kernel argument, where a
  // 0-dim CPU tensor would be copied to a GPU with a host sync per block.)
  const at::Tensor block_output =
      block.output.masked_fill(block_lse.isneginf().unsqueeze(-1), 0.0);
  const at::Tensor merged_lse = at::logaddexp(log_sum_exp_, block_lse);
  // Where no key was visible yet in either part, both weights are
  // exp(-inf - 0) = 0 instead of exp(-inf + inf) = NaN.
  const at::Tensor reference =
      merged_lse.masked_fill(merged_lse.isneginf(), 0.0);
  output_ = output_ * at::exp(log_sum_exp_ - reference).unsqueeze(-1) +
            block_output * at::exp(block_lse - reference).unsqueeze(-1);
  log_sum_exp_ = merged_lse;
}

at::Tensor AttentionAccumulator::Result() const {
  return output_.to(q_.scalar_type());
}

}  // namespace ditserve::parallel
