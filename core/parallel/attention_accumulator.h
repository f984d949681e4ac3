#ifndef DITSERVE_CORE_PARALLEL_ATTENTION_ACCUMULATOR_H_
#define DITSERVE_CORE_PARALLEL_ATTENTION_ACCUMULATOR_H_

#include <ATen/core/Tensor.h>

#include <optional>

namespace ditserve::parallel {

// softmax(q k^T / sqrt(D)) v over keys that arrive in blocks (a ring hands
// each rank one block of K/V per step). Each block's partial output is
// weighted by its log-sum-exp, so the result equals attention over all keys
// at once up to the order of float32 sums, and on a GPU up to what its fused
// kernel rounds in each block (models::AttentionResult).
class AttentionAccumulator {
 public:
  // q: [B, H, S_q, D], the queries every block is attended with.
  explicit AttentionAccumulator(const at::Tensor& q);

  // Folds in one block: k, v [B, H, S_block, D]; key_mask optional bool
  // [B, S_block], true = attend. A block whose keys are all masked for a
  // query (a block of padding) contributes nothing to it.
  void AddBlock(const at::Tensor& k, const at::Tensor& v,
                const std::optional<at::Tensor>& key_mask);

  // [B, H, S_q, D] in the dtype of q. Queries that no block let attend to
  // any key get zeros.
  at::Tensor Result() const;

 private:
  at::Tensor q_;
  // Float32 running output, normalised over the keys folded in so far.
  at::Tensor output_;
  // Float32 [B, H, S_q]: log of the softmax denominator so far (-inf until a
  // key is visible).
  at::Tensor log_sum_exp_;
};

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_ATTENTION_ACCUMULATOR_H_
