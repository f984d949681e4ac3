#include "core/models/layers/cpu_gemm.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace ditserve::models {
namespace {

// Float32 products against the same product in float64.
void ExpectCloseToFloat64(const at::Tensor& actual, const at::Tensor& exact) {
  ASSERT_EQ(actual.sizes(), exact.sizes());
  EXPECT_EQ(actual.scalar_type(), at::kFloat);
  EXPECT_TRUE(torch::allclose(actual.to(at::kDouble), exact, 1e-5, 1e-5))
      << "max abs error "
      << (actual.to(at::kDouble) - exact).abs().max().item<double>();
}

at::Tensor ExactLinear(const at::Tensor& x, const at::Tensor& weight,
                       const at::Tensor& bias) {
  return at::linear(x.to(at::kDouble), weight.to(at::kDouble),
                    bias.defined() ? bias.to(at::kDouble) : at::Tensor());
}

class CpuGemmTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::manual_seed(3); }
  c10::InferenceMode inference_;
};

TEST_F(CpuGemmTest, LinearOfABatchWithBias) {
  const at::Tensor x = torch::randn({2, 7, 33});
  const at::Tensor weight = torch::randn({19, 33});
  const at::Tensor bias = torch::randn({19});
  ExpectCloseToFloat64(ApplyLinear(x, weight, bias),
                       ExactLinear(x, weight, bias));
}

TEST_F(CpuGemmTest, LinearWithoutBias) {
  const at::Tensor x = torch::randn({5, 16});
  const at::Tensor weight = torch::randn({8, 16});
  ExpectCloseToFloat64(ApplyLinear(x, weight, at::Tensor()),
                       ExactLinear(x, weight, at::Tensor()));
}

TEST_F(CpuGemmTest, LinearOfRowsThatAreNotContiguous) {
  const at::Tensor x = torch::randn({33, 14}).t();
  const at::Tensor weight = torch::randn({6, 33});
  const at::Tensor bias = torch::randn({6});
  ExpectCloseToFloat64(ApplyLinear(x, weight, bias),
                       ExactLinear(x, weight, bias));
}

TEST_F(CpuGemmTest, LinearOfOneRowWhoseRowStrideIsMeaningless) {
  // [1, 33] with strides (1, 1): contiguous, but its row stride is not the
  // row length.
  const at::Tensor x = torch::randn({33, 1}).t();
  ASSERT_EQ(x.stride(0), 1);
  const at::Tensor weight = torch::randn({4, 33});
  const at::Tensor bias = torch::randn({4});
  ExpectCloseToFloat64(ApplyLinear(x, weight, bias),
                       ExactLinear(x, weight, bias));
}

TEST_F(CpuGemmTest, BatchedMatmulOfPermutedViewsWithTransposedB) {
  // [B, S, H, D] activations seen as [B, H, S, D], as attention does.
  const at::Tensor q = torch::randn({2, 9, 3, 8}).permute({0, 2, 1, 3});
  const at::Tensor k = torch::randn({2, 11, 3, 8}).permute({0, 2, 1, 3});
  ExpectCloseToFloat64(
      BatchedMatmul(q, k, /*transpose_b=*/true),
      at::matmul(q.to(at::kDouble), k.to(at::kDouble).transpose(-2, -1)));
}

TEST_F(CpuGemmTest, BatchedMatmulWithoutTransposition) {
  const at::Tensor scores = torch::randn({2, 3, 9, 11});
  const at::Tensor v = torch::randn({2, 11, 3, 8}).permute({0, 2, 1, 3});
  ExpectCloseToFloat64(BatchedMatmul(scores, v, /*transpose_b=*/false),
                       at::matmul(scores.to(at::kDouble), v.to(at::kDouble)));
}

TEST_F(CpuGemmTest, OtherDtypesTakeAtenAndGiveItsBits) {
  const at::Tensor x = torch::randn({5, 16}).to(at::kBFloat16);
  const at::Tensor weight = torch::randn({8, 16}).to(at::kBFloat16);
  const at::Tensor bias = torch::randn({8}).to(at::kBFloat16);
  EXPECT_TRUE(
      torch::equal(ApplyLinear(x, weight, bias), at::linear(x, weight, bias)));
}

TEST(CpuGemmAutogradTest, WeightsThatRequireGradKeepTheGraph) {
  torch::manual_seed(3);
  const at::Tensor x = torch::randn({5, 16});
  const at::Tensor weight = torch::randn({8, 16}).requires_grad_();
  const at::Tensor out = ApplyLinear(x, weight, at::Tensor());
  EXPECT_TRUE(out.requires_grad());
  out.sum().backward();
  EXPECT_TRUE(torch::allclose(weight.grad(), x.sum(0).expand({8, 16})));
}

}  // namespace
}  // namespace ditserve::models
