#include "core/parallel/stale_kv_attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>

#include "core/parallel/local_attention.h"

namespace ditserve::parallel {
namespace {

// [B=1, H=2, S, D=4]
at::Tensor Random(int64_t tokens) { return at::randn({1, 2, tokens, 4}); }

TEST(StaleKvAttentionTest, PatchAttendsToItsFreshRowsAndTheCachedOthers) {
  at::manual_seed(0);
  StaleKvAttention attention;
  LocalAttention local;
  const at::Tensor q = Random(6), k = Random(6), v = Random(6);
  // Two layers, to check that each keeps its own cache.
  attention.BeginWholeSequence(at::arange(6, at::kLong).unsqueeze(0));
  EXPECT_TRUE(attention.Attend(q, k, v, std::nullopt)
                  .equal(local.Attend(q, k, v, std::nullopt)));
  attention.Attend(q, 2 * k, v, std::nullopt);

  // Positions 0 and 4 come back with new keys and values.
  const at::Tensor rows = at::tensor({0, 4}, at::kLong);
  const at::Tensor pq = Random(2), pk = Random(2), pv = Random(2);
  attention.BeginPatch(rows.unsqueeze(0));
  const at::Tensor first = attention.Attend(pq, pk, pv, std::nullopt);
  const at::Tensor second = attention.Attend(pq, pk, pv, std::nullopt);

  at::Tensor keys = k.clone(), values = v.clone();
  keys.index_copy_(2, rows, pk);
  values.index_copy_(2, rows, pv);
  EXPECT_TRUE(at::allclose(first, local.Attend(pq, keys, values, std::nullopt),
                           1e-6, 1e-6));
  at::Tensor second_keys = 2 * k;
  second_keys.index_copy_(2, rows, pk);
  EXPECT_TRUE(at::allclose(
      second, local.Attend(pq, second_keys, values, std::nullopt), 1e-6, 1e-6));
}

TEST(StaleKvAttentionTest, PatchWithoutAWholeForwardBeforeIsAnError) {
  StaleKvAttention attention;
  attention.BeginPatch(at::tensor({0}, at::kLong).unsqueeze(0));
  EXPECT_THROW(attention.Attend(Random(1), Random(1), Random(1), std::nullopt),
               std::logic_error);
}

TEST(StaleKvAttentionTest, RowsOfAnotherSequenceParallelDegreeAreAnError) {
  StaleKvAttention attention(StaleKvSharing{.ulysses = 2});
  EXPECT_THROW(attention.BeginPatch(at::tensor({0, 1}, at::kLong).unsqueeze(0)),
               std::invalid_argument);
}

}  // namespace
}  // namespace ditserve::parallel
