#include "core/parallel/local_attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace ditserve::parallel {
namespace {

TEST(LocalAttentionTest, ScalesScoresByInverseSquareRootOfHeadDim) {
  torch::manual_seed(11);
  const at::Tensor q = torch::randn({1, 2, 3, 16});
  const at::Tensor k = torch::randn({1, 2, 3, 16});
  const at::Tensor v = torch::randn({1, 2, 3, 16});
  const at::Tensor expected =
      torch::softmax(torch::matmul(q, k.transpose(-2, -1)) / 4.0, -1).matmul(v);
  LocalAttention attention;
  EXPECT_TRUE(torch::allclose(attention.Attend(q, k, v, std::nullopt), expected,
                              1e-6, 1e-6));
}

TEST(LocalAttentionTest, KeyMaskHidesPaddedKeysPerBatchEntry) {
  torch::manual_seed(12);
  const at::Tensor q = torch::randn({2, 2, 3, 8});
  const at::Tensor k = torch::randn({2, 2, 5, 8});
  const at::Tensor v = torch::randn({2, 2, 5, 8});
  // Entry 0 keeps all five keys, entry 1 only the first three.
  const at::Tensor key_mask =
      torch::tensor({{1, 1, 1, 1, 1}, {1, 1, 1, 0, 0}}).to(torch::kBool);
  LocalAttention attention;
  const at::Tensor out = attention.Attend(q, k, v, key_mask);
  const at::Tensor full = attention.Attend(q, k, v, std::nullopt);
  const at::Tensor truncated =
      attention.Attend(q.slice(0, 1, 2), k.slice(0, 1, 2).slice(2, 0, 3),
                       v.slice(0, 1, 2).slice(2, 0, 3), std::nullopt);
  EXPECT_TRUE(torch::allclose(out.slice(0, 0, 1), full.slice(0, 0, 1)));
  EXPECT_TRUE(torch::allclose(out.slice(0, 1, 2), truncated, 1e-6, 1e-6));
}

}  // namespace
}  // namespace ditserve::parallel
