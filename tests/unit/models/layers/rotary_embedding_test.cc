#include "core/models/layers/rotary_embedding.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace ditserve::models {
namespace {

TEST(FluxRotaryTablesTest, EachAxisUsesItsOwnFrequenciesInterleaved) {
  // Two positions, axes of 2 and 4 channels; position ids (0, 3), (0, 5).
  const at::Tensor ids = torch::tensor({{0.0F, 3.0F}, {0.0F, 5.0F}});
  const RotaryTables tables = FluxRotaryTables(ids, {2, 4}, 10000.0);
  ASSERT_EQ(tables.cos.sizes(), (at::IntArrayRef{2, 6}));
  EXPECT_EQ(tables.cos.scalar_type(), torch::kFloat);
  // Axis 0 (position 0): angle 0 in both interleaved channels.
  EXPECT_FLOAT_EQ(tables.cos[1][0].item<float>(), 1.0F);
  EXPECT_FLOAT_EQ(tables.sin[1][1].item<float>(), 0.0F);
  // Axis 1, frequencies 1 and 10000^(-2/4) = 0.01, position 5.
  EXPECT_FLOAT_EQ(tables.cos[1][2].item<float>(), std::cos(5.0F));
  EXPECT_FLOAT_EQ(tables.cos[1][3].item<float>(), std::cos(5.0F));
  EXPECT_FLOAT_EQ(tables.sin[1][4].item<float>(),
                  static_cast<float>(std::sin(5.0 * 0.01)));
  EXPECT_FLOAT_EQ(tables.sin[1][5].item<float>(),
                  static_cast<float>(std::sin(5.0 * 0.01)));
}

TEST(ApplyRotaryEmbeddingTest, RotatesEachPairLikeAComplexProduct) {
  torch::manual_seed(3);
  const at::Tensor x = torch::randn({1, 2, 4, 6});
  const at::Tensor ids = torch::stack(
      {torch::zeros({4}), torch::arange(4.0), torch::arange(4.0) * 2}, 1);
  const RotaryTables tables = FluxRotaryTables(ids, {2, 2, 2}, 10000.0);
  const at::Tensor rotated =
      ApplyRotaryEmbedding(x, tables, HeadLayout::kHeadsFirst);
  const at::Tensor as_complex =
      torch::view_as_complex(x.reshape({1, 2, 4, 3, 2}).contiguous());
  const at::Tensor phase = torch::view_as_complex(
      torch::stack({tables.cos.slice(1, 0, 6, 2), tables.sin.slice(1, 0, 6, 2)},
                   -1)
          .contiguous());
  const at::Tensor expected =
      torch::view_as_real(as_complex * phase).reshape({1, 2, 4, 6});
  EXPECT_TRUE(torch::allclose(rotated, expected, 1e-6, 1e-6));
}

TEST(ApplyRotaryEmbeddingTest, PositionZeroIsTheIdentity) {
  const at::Tensor x = torch::randn({1, 1, 3, 4});
  const RotaryTables tables =
      FluxRotaryTables(torch::zeros({3, 2}), {2, 2}, 10000.0);
  EXPECT_TRUE(torch::equal(
      ApplyRotaryEmbedding(x, tables, HeadLayout::kHeadsFirst), x));
}

TEST(ApplyRotaryEmbeddingTest, TokensFirstRotatesEachTokensHeadsAlike) {
  torch::manual_seed(4);
  const at::Tensor heads_first = torch::randn({2, 3, 5, 4});
  const RotaryTables tables = FluxRotaryTables(
      torch::stack({torch::arange(5.0), torch::arange(5.0) * 3}, 1), {2, 2},
      10000.0);
  const at::Tensor tokens_first =
      ApplyRotaryEmbedding(heads_first.transpose(1, 2).contiguous(), tables,
                           HeadLayout::kTokensFirst);
  EXPECT_TRUE(torch::equal(
      tokens_first.transpose(1, 2),
      ApplyRotaryEmbedding(heads_first, tables, HeadLayout::kHeadsFirst)));
}

// diffusers converts x and its rotated pairs to float32 before the products
// and rounds the sum once: bfloat16 results must be those bits.
TEST(ApplyRotaryEmbeddingTest, BFloat16ComputesInFloat32AndRoundsOnce) {
  torch::manual_seed(5);
  const at::Tensor x = torch::randn({1, 2, 6, 8}).to(torch::kBFloat16);
  const RotaryTables tables = FluxRotaryTables(
      torch::stack({torch::arange(6.0), torch::arange(6.0) * 7}, 1), {4, 4},
      10000.0);
  const at::Tensor pairs = x.reshape({1, 2, 6, 4, 2});
  const at::Tensor rotated =
      torch::stack({-pairs.select(-1, 1), pairs.select(-1, 0)}, -1)
          .reshape({1, 2, 6, 8});
  const at::Tensor expected = (x.to(torch::kFloat) * tables.cos +
                               rotated.to(torch::kFloat) * tables.sin)
                                  .to(torch::kBFloat16);
  const at::Tensor result =
      ApplyRotaryEmbedding(x, tables, HeadLayout::kHeadsFirst);
  EXPECT_EQ(result.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(result, expected));
}

}  // namespace
}  // namespace ditserve::models
