#include "core/models/layers/attention.h"

#include <torch/torch.h>
#include <torch/version.h>

#if __has_include(<ATen/SDPBackend.h>)
#include <ATen/SDPBackend.h>
#define DITSERVE_FUSED_LOG_SUM_EXP 1
#endif

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "core/models/layers/cpu_gemm.h"

namespace ditserve::models {
namespace {

// The attention of the query rows `q` holds; `mask` has their rows or
// broadcasts over them. The scale goes into q rather than the S_q x S_k
// scores, which are then masked and softmaxed in place: they are the largest
// tensor here, each pass over them costs as much as their product, and a
// fresh one costs page faults.
AttentionResult AttendRows(const at::Tensor& q, const at::Tensor& k,
                           const at::Tensor& v,
                           const std::optional<at::Tensor>& mask, double scale,
                           bool return_log_sum_exp) {
  at::Tensor scores = BatchedMatmul(q.to(at::kFloat) * scale, k.to(at::kFloat),
                                    /*transpose_b=*/true);
  if (mask.has_value()) {
    if (mask->scalar_type() == at::kBool) {
      scores.masked_fill_(mask->logical_not(),
                          -std::numeric_limits<float>::infinity());
    } else {
      scores.add_(mask->to(at::kFloat));
    }
  }
  AttentionResult result;
  if (return_log_sum_exp) result.log_sum_exp = at::logsumexp(scores, -1);
  if (scores.requires_grad()) {
    // Autograd has no out= softmax; weights that require grad (as tests load
    // them outside inference mode) take the allocating one.
    scores = at::softmax(scores, -1);
  } else {
    at::_softmax_out(scores, scores, -1, /*half_to_float=*/false);
  }
  result.output =
      BatchedMatmul(scores, v.to(at::kFloat), /*transpose_b=*/false);
  if (!return_log_sum_exp) result.output = result.output.to(q.scalar_type());
  return result;
}

#ifdef DITSERVE_FUSED_LOG_SUM_EXP
// The fused kernel LibTorch picks for these inputs on a GPU, called for its
// log-sum-exp too, which scaled_dot_product_attention does not hand out;
// nullopt where it would pick another (cuDNN's, or math). Unmasked only: the
// fused kernels take a mask as a float bias in layouts of their own, and the
// rings that ask for the log-sum-exp attend over every key.
std::optional<AttentionResult> FusedOnGpu(const at::Tensor& q,
                                          const at::Tensor& k,
                                          const at::Tensor& v, double scale) {
  if (!q.is_cuda()) return std::nullopt;
  const auto kernel = static_cast<at::SDPBackend>(
      at::_fused_sdp_choice(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0,
                            /*is_causal=*/false, scale));
  // scaled_dot_product_attention pads other head sizes for flash; its
  // kernel itself takes multiples of 8 only.
  if (kernel == at::SDPBackend::flash_attention && q.size(-1) % 8 == 0) {
    auto result = at::_scaled_dot_product_flash_attention(
        q, k, v, /*dropout_p=*/0.0, /*is_causal=*/false,
        /*return_debug_mask=*/false, scale);
    return AttentionResult{std::get<0>(result), std::get<1>(result)};
  }
  if (kernel == at::SDPBackend::efficient_attention) {
    auto result = at::_scaled_dot_product_efficient_attention(
        q, k, v, /*attn_bias=*/{}, /*compute_log_sumexp=*/true,
        /*dropout_p=*/0.0, /*is_causal=*/false, scale);
    // Its log-sum-exp is padded to a multiple of 32 queries.
    return AttentionResult{std::get<0>(result),
                           std::get<1>(result).narrow(-1, 0, q.size(-2))};
  }
  return std::nullopt;
}
#endif

}  // namespace

AttentionResult MathAttention(const at::Tensor& q, const at::Tensor& k,
                              const at::Tensor& v,
                              const std::optional<at::Tensor>& mask,
                              double scale, bool return_log_sum_exp,
                              int64_t max_score_bytes) {
  const int64_t queries = q.size(-2);
  const int64_t row_bytes = static_cast<int64_t>(sizeof(float)) * q.numel() /
                            std::max<int64_t>(queries, 1) / q.size(-1) *
                            k.size(-2);
  const int64_t rows =
      std::max<int64_t>(1, max_score_bytes / std::max<int64_t>(row_bytes, 1));
  if (rows >= queries) {
    return AttendRows(q, k, v, mask, scale, return_log_sum_exp);
  }
  const bool mask_has_rows =
      mask.has_value() && mask->dim() >= 2 && mask->size(-2) == queries;
  std::vector<at::Tensor> outputs;
  std::vector<at::Tensor> log_sum_exps;
  for (int64_t begin = 0; begin < queries; begin += rows) {
    const int64_t count = std::min(rows, queries - begin);
    std::optional<at::Tensor> mask_rows = mask;
    if (mask_has_rows) mask_rows = mask->narrow(-2, begin, count);
    AttentionResult chunk = AttendRows(q.narrow(-2, begin, count), k, v,
                                       mask_rows, scale, return_log_sum_exp);
    outputs.push_back(std::move(chunk.output));
    if (return_log_sum_exp)
      log_sum_exps.push_back(std::move(chunk.log_sum_exp));
  }
  AttentionResult result;
  result.output = at::cat(outputs, -2);
  if (return_log_sum_exp) result.log_sum_exp = at::cat(log_sum_exps, -1);
  return result;
}

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
#ifdef DITSERVE_FUSED_LOG_SUM_EXP
  if (return_log_sum_exp && !mask.has_value()) {
    if (std::optional<AttentionResult> fused = FusedOnGpu(q, k, v, scale)) {
      return *std::move(fused);
    }
  }
#endif
  return MathAttention(q, k, v, mask, scale, return_log_sum_exp,
                       kMaxScoreBytes);
}

}  // namespace ditserve::models
