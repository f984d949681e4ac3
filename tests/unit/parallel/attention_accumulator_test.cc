#include "core/parallel/attention_accumulator.h"

#include <ATen/Context.h>
#include <torch/torch.h>

#include <cmath>
#include <optional>

#include "core/parallel/local_attention.h"
#include "gtest/gtest.h"

namespace ditserve::parallel {
namespace {

// Splitting the keys into blocks only reorders float32 sums (each block's
// softmax is renormalised by its log-sum-exp), so blocks and one pass agree
// to a few ulp of values of order 1.
constexpr double kTolerance = 1e-5;

struct Qkv {
  at::Tensor q, k, v;
};

Qkv RandomQkv(int64_t keys) {
  at::manual_seed(7);
  return {at::randn({2, 3, 5, 8}), at::randn({2, 3, keys, 8}),
          at::randn({2, 3, keys, 8})};
}

TEST(AttentionAccumulatorTest, BlocksOfKeysEqualAttentionOverAllKeys) {
  const Qkv x = RandomQkv(10);
  AttentionAccumulator accumulator(x.q);
  for (int64_t start : {0, 4, 7}) {
    const int64_t length = start == 0 ? 4 : 3;
    accumulator.AddBlock(x.k.narrow(2, start, length),
                         x.v.narrow(2, start, length), std::nullopt);
  }
  const at::Tensor expected =
      LocalAttention().Attend(x.q, x.k, x.v, std::nullopt);
  EXPECT_LT((accumulator.Result() - expected).abs().max().item<double>(),
            kTolerance);
}

// In bfloat16 the result is rounded once, at the end: within one bfloat16
// ulp of float32 attention over the same (bfloat16) inputs, which allows the
// final rounding plus float32 sums in another order. Blocks rounded to
// bfloat16 before the merge would add a rounding per block.
TEST(AttentionAccumulatorTest, Bfloat16BlocksAreRoundedOnceAtTheEnd) {
  at::manual_seed(11);
  const at::Tensor q = at::randn({2, 4, 64, 16}).to(at::kBFloat16);
  const at::Tensor k = at::randn({2, 4, 96, 16}).to(at::kBFloat16);
  const at::Tensor v = at::randn({2, 4, 96, 16}).to(at::kBFloat16);
  AttentionAccumulator accumulator(q);
  for (int64_t start = 0; start < 96; start += 24) {
    accumulator.AddBlock(k.narrow(2, start, 24), v.narrow(2, start, 24),
                         std::nullopt);
  }
  const at::Tensor result = accumulator.Result();
  ASSERT_EQ(result.scalar_type(), at::kBFloat16);
  const at::Tensor expected = LocalAttention().Attend(
      q.to(at::kFloat), k.to(at::kFloat), v.to(at::kFloat), std::nullopt);
  // bfloat16 keeps 8 significant bits: its ulp at x is 2^(floor(log2|x|)-7).
  const at::Tensor ulp = at::pow(2.0, at::floor(at::log2(expected.abs())) - 7);
  EXPECT_TRUE(
      ((result.to(at::kFloat) - expected).abs() <= ulp).all().item<bool>());
}

// On a GPU each block's output comes from a fused kernel, rounded to
// bfloat16 along with the probabilities of its second product: each block
// within 2^-7 of its softmax @ |v|, their weighted sum within 2^-7 of the
// whole softmax @ |v|, and the result within one more rounding.
TEST(AttentionAccumulatorTest, GpuBlocksStayWithinTheirKernelsRoundings) {
  if (!at::hasCUDA()) GTEST_SKIP() << "needs a GPU";
  at::manual_seed(11);
  const auto on_gpu =
      at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  const at::Tensor q = at::randn({2, 4, 64, 64}, on_gpu);
  const at::Tensor k = at::randn({2, 4, 96, 64}, on_gpu);
  const at::Tensor v = at::randn({2, 4, 96, 64}, on_gpu);
  AttentionAccumulator accumulator(q);
  for (int64_t start = 0; start < 96; start += 24) {
    accumulator.AddBlock(k.narrow(2, start, 24), v.narrow(2, start, 24),
                         std::nullopt);
  }
  const at::Tensor result = accumulator.Result().cpu().to(at::kFloat);
  const at::Tensor q32 = q.cpu().to(at::kFloat);
  const at::Tensor k32 = k.cpu().to(at::kFloat);
  const at::Tensor v32 = v.cpu().to(at::kFloat);
  const at::Tensor expected =
      LocalAttention().Attend(q32, k32, v32, std::nullopt);
  const at::Tensor probabilities =
      at::softmax(at::matmul(q32, k32.transpose(-2, -1)) / 8.0, -1);
  const at::Tensor bound =
      std::pow(2.0, -7) * at::matmul(probabilities, v32.abs()) +
      at::pow(2.0, at::floor(at::log2(expected.abs())) - 7);
  EXPECT_TRUE(((result - expected).abs() <= bound).all().item<bool>());
}

TEST(AttentionAccumulatorTest, FullyMaskedBlockContributesNothing) {
  const Qkv x = RandomQkv(8);
  at::Tensor mask = at::ones({2, 8}, at::kBool);
  // The second block of four keys is all padding; one key of the first is
  // hidden by the user.
  mask.narrow(1, 4, 4).fill_(false);
  mask.index_put_({0, 1}, false);
  AttentionAccumulator accumulator(x.q);
  accumulator.AddBlock(x.k.narrow(2, 0, 4), x.v.narrow(2, 0, 4),
                       mask.narrow(1, 0, 4));
  accumulator.AddBlock(x.k.narrow(2, 4, 4), x.v.narrow(2, 4, 4),
                       mask.narrow(1, 4, 4));
  const at::Tensor result = accumulator.Result();
  const at::Tensor expected = LocalAttention().Attend(x.q, x.k, x.v, mask);
  ASSERT_FALSE(result.isnan().any().item<bool>());
  EXPECT_LT((result - expected).abs().max().item<double>(), kTolerance);
}

TEST(AttentionAccumulatorTest, FullyMaskedFirstBlockDoesNotPoisonLaterOnes) {
  const Qkv x = RandomQkv(6);
  at::Tensor mask = at::ones({2, 6}, at::kBool);
  mask.narrow(1, 0, 3).fill_(false);
  AttentionAccumulator accumulator(x.q);
  accumulator.AddBlock(x.k.narrow(2, 0, 3), x.v.narrow(2, 0, 3),
                       mask.narrow(1, 0, 3));
  accumulator.AddBlock(x.k.narrow(2, 3, 3), x.v.narrow(2, 3, 3),
                       mask.narrow(1, 3, 3));
  const at::Tensor expected = LocalAttention().Attend(x.q, x.k, x.v, mask);
  EXPECT_LT((accumulator.Result() - expected).abs().max().item<double>(),
            kTolerance);
}

TEST(AttentionAccumulatorTest, QueriesThatSeeNoKeyGetZeros) {
  const Qkv x = RandomQkv(4);
  AttentionAccumulator accumulator(x.q);
  accumulator.AddBlock(x.k, x.v, at::zeros({2, 4}, at::kBool));
  EXPECT_TRUE(at::equal(accumulator.Result(), at::zeros_like(x.q)));
}

}  // namespace
}  // namespace ditserve::parallel
