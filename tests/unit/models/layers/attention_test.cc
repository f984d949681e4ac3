#include "core/models/layers/attention.h"

#include <ATen/Context.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace ditserve::models {
namespace {

constexpr double kScale = 0.25;

class AttentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(7);
    q_ = torch::randn({2, 3, 5, 16});
    k_ = torch::randn({2, 3, 6, 16});
    v_ = torch::randn({2, 3, 6, 16});
  }
  at::Tensor q_, k_, v_;
};

TEST_F(AttentionTest, ComputesSoftmaxOfScaledScoresTimesValues) {
  const at::Tensor expected =
      torch::softmax(torch::matmul(q_, k_.transpose(-2, -1)) * kScale, -1)
          .matmul(v_);
  const AttentionResult result =
      ScaledDotProductAttention(q_, k_, v_, std::nullopt, kScale, false);
  EXPECT_TRUE(torch::allclose(result.output, expected, 1e-6, 1e-6));
  EXPECT_FALSE(result.log_sum_exp.defined());
}

TEST_F(AttentionTest, ReturnsLogSumExpOfScaledScores) {
  const at::Tensor expected =
      torch::logsumexp(torch::matmul(q_, k_.transpose(-2, -1)) * kScale, -1);
  const AttentionResult result =
      ScaledDotProductAttention(q_, k_, v_, std::nullopt, kScale, true);
  ASSERT_TRUE(result.log_sum_exp.defined());
  EXPECT_EQ(result.log_sum_exp.sizes(), (at::IntArrayRef{2, 3, 5}));
  EXPECT_TRUE(torch::allclose(result.log_sum_exp, expected, 1e-6, 1e-6));
}

TEST_F(AttentionTest, FalseInBoolMaskHidesThoseKeys) {
  // Hiding the last two keys equals attending over the first four only.
  at::Tensor mask = torch::ones({1, 1, 1, 6}, torch::kBool);
  mask.index_put_({0, 0, 0, torch::indexing::Slice(4, 6)}, false);
  const at::Tensor masked =
      ScaledDotProductAttention(q_, k_, v_, mask, kScale, false).output;
  const at::Tensor truncated =
      ScaledDotProductAttention(q_, k_.slice(2, 0, 4), v_.slice(2, 0, 4),
                                std::nullopt, kScale, false)
          .output;
  EXPECT_TRUE(torch::allclose(masked, truncated, 1e-6, 1e-6));
}

TEST_F(AttentionTest, FloatMaskIsAddedToTheScores) {
  const at::Tensor bias = torch::randn({5, 6});
  const at::Tensor expected =
      torch::softmax(torch::matmul(q_, k_.transpose(-2, -1)) * kScale + bias,
                     -1)
          .matmul(v_);
  EXPECT_TRUE(torch::allclose(
      ScaledDotProductAttention(q_, k_, v_, bias, kScale, false).output,
      expected, 1e-6, 1e-6));
}

// Without the log-sum-exp the output comes back in the inputs' dtype; with
// it, in float32 for a ring to merge unrounded.
TEST_F(AttentionTest, ReducedPrecisionInputsGiveTheirDtypeBack) {
  const at::Tensor reference =
      ScaledDotProductAttention(q_, k_, v_, std::nullopt, kScale, true).output;
  const at::Tensor q = q_.to(torch::kBFloat16);
  const at::Tensor k = k_.to(torch::kBFloat16);
  const at::Tensor v = v_.to(torch::kBFloat16);
  const at::Tensor half =
      ScaledDotProductAttention(q, k, v, std::nullopt, kScale, false).output;
  EXPECT_EQ(half.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::allclose(half.to(torch::kFloat), reference, 0.05, 0.05));
  const AttentionResult for_merge =
      ScaledDotProductAttention(q, k, v, std::nullopt, kScale, true);
  EXPECT_EQ(for_merge.output.scalar_type(), torch::kFloat);
  EXPECT_EQ(for_merge.log_sum_exp.scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::allclose(for_merge.output, reference, 0.05, 0.05));
}

// Chunks of 1 and 2 query rows (scores of 2 x 3 x 6 floats per row) against
// one chunk: the same outputs and log-sum-exps, with a per-query float mask
// (cut with the queries) and a key mask broadcast over them.
TEST_F(AttentionTest, QueryChunksGiveTheWholeAttention) {
  const int64_t row_bytes = 2 * 3 * 6 * sizeof(float);
  const at::Tensor bias = torch::randn({2, 3, 5, 6});
  const at::Tensor key_mask =
      torch::tensor({true, true, false, true, true, false}).view({1, 1, 1, 6});
  for (const std::optional<at::Tensor>& mask :
       {std::optional<at::Tensor>(), std::optional<at::Tensor>(bias),
        std::optional<at::Tensor>(key_mask)}) {
    const AttentionResult whole =
        MathAttention(q_, k_, v_, mask, kScale, true, kMaxScoreBytes);
    for (const int64_t rows : {1, 2}) {
      const AttentionResult chunked =
          MathAttention(q_, k_, v_, mask, kScale, true, rows * row_bytes);
      EXPECT_TRUE(torch::allclose(chunked.output, whole.output, 1e-6, 1e-6))
          << rows << " rows per chunk";
      EXPECT_TRUE(
          torch::allclose(chunked.log_sum_exp, whole.log_sum_exp, 1e-6, 1e-6))
          << rows << " rows per chunk";
    }
  }
}

// A budget below one row still makes progress, one query at a time.
TEST_F(AttentionTest, ABudgetBelowOneRowAttendsRowByRow) {
  const AttentionResult whole =
      MathAttention(q_, k_, v_, std::nullopt, kScale, false, kMaxScoreBytes);
  const AttentionResult chunked =
      MathAttention(q_, k_, v_, std::nullopt, kScale, false, 1);
  EXPECT_TRUE(torch::allclose(chunked.output, whole.output, 1e-6, 1e-6));
}

// On a GPU the log-sum-exp comes from the fused kernel LibTorch picks: flash
// in bfloat16, memory-efficient in float32, whose log-sum-exp is padded to
// a multiple of 32 queries (hence 100). The math path over the same inputs
// gives the same log-sum-exp up to float32 sums in another order. In
// bfloat16 its output may differ by what flash rounds: the probabilities of
// its second product (each within 2^-8 of itself, so the output within 2^-8
// of softmax @ |v|) and the output itself (half a bfloat16 ulp). In float32,
// by float32 sums of 64 products in another order and the kernel's exp: far
// below 1e-4 of softmax @ |v|.
TEST(GpuAttentionTest, FusedKernelsGiveTheMathPathsLogSumExp) {
  if (!at::hasCUDA()) GTEST_SKIP() << "needs a GPU";
  torch::manual_seed(7);
  for (const auto dtype : {torch::kBFloat16, torch::kFloat}) {
    const auto on_gpu =
        torch::TensorOptions().device(torch::kCUDA).dtype(dtype);
    const at::Tensor q = torch::randn({2, 4, 100, 64}, on_gpu);
    const at::Tensor k = torch::randn({2, 4, 80, 64}, on_gpu);
    const at::Tensor v = torch::randn({2, 4, 80, 64}, on_gpu);
    const AttentionResult fused =
        ScaledDotProductAttention(q, k, v, std::nullopt, kScale, true);
    const AttentionResult math = MathAttention(
        q.cpu(), k.cpu(), v.cpu(), std::nullopt, kScale, true, kMaxScoreBytes);
    ASSERT_EQ(fused.log_sum_exp.sizes(), (at::IntArrayRef{2, 4, 100}));
    EXPECT_EQ(fused.log_sum_exp.scalar_type(), torch::kFloat);
    EXPECT_LT(
        (fused.log_sum_exp.cpu() - math.log_sum_exp).abs().max().item<double>(),
        1e-4)
        << dtype;
    const at::Tensor probabilities = torch::softmax(
        torch::matmul(q.cpu().to(torch::kFloat) * kScale,
                      k.cpu().to(torch::kFloat).transpose(-2, -1)),
        -1);
    const at::Tensor magnitude =
        torch::matmul(probabilities, v.cpu().to(torch::kFloat).abs());
    const at::Tensor ulp =
        torch::pow(2.0, torch::floor(torch::log2(math.output.abs())) - 7);
    const at::Tensor bound = dtype == torch::kBFloat16
                                 ? std::pow(2.0, -8) * magnitude + ulp
                                 : 1e-4 * magnitude + 1e-6;
    EXPECT_TRUE(
        ((fused.output.cpu().to(torch::kFloat) - math.output).abs() <= bound)
            .all()
            .item<bool>())
        << dtype;
  }
}

}  // namespace
}  // namespace ditserve::models
