#include "core/parallel/attention_accumulator.h"

#include <torch/torch.h>

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
