#include "core/pipelines/flux/flux_sequence_parallel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "core/models/flux/flux_transformer_loader.h"
#include "core/parallel/local_attention.h"
#include "core/parallel/ring_attention.h"
#include "tests/unit/models/flux/flux_golden_inputs.h"
#include "tests/unit/models/golden_case.h"
#include "tests/unit/parallel/thread_rank_groups.h"

namespace ditserve::pipelines {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::FluxGoldenInputs;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::SingleRankFluxForward;
using ::ditserve::testing::ThreadRankGroups;
using ::testing::HasSubstr;

constexpr std::chrono::milliseconds kTimeout{30000};

// The split Freeze derives for `tokens` over `degree` ranks.
v1::DerivedShapes ShapesFor(int tokens, int degree) {
  const int shard = (tokens + degree - 1) / degree;
  v1::DerivedShapes shapes;
  shapes.set_sequence_tokens(tokens);
  shapes.set_padded_sequence_tokens(shard * degree);
  shapes.set_sequence_padding_tokens(shard * degree - tokens);
  shapes.set_shard_tokens(shard);
  return shapes;
}

class ShardedFluxForwardTest : public ::testing::TestWithParam<int> {};

TEST_P(ShardedFluxForwardTest, EveryRankGetsTheUnshardedForward) {
  const int degree = GetParam();
  const GoldenCase golden("models/flux_dev");
  const models::FluxTransformerInputs inputs =
      FluxGoldenInputs(golden, /*guidance=*/true);
  const absl::StatusOr<at::Tensor> expected =
      SingleRankFluxForward(golden, inputs);
  torch::NoGradGuard no_grad;
  ASSERT_TRUE(expected.ok()) << expected.status();

  // 8 text + 16 image tokens.
  const v1::DerivedShapes shapes = ShapesFor(24, degree);
  std::vector<parallel::Group> groups =
      ThreadRankGroups("sp", degree, kTimeout);
  std::vector<std::shared_ptr<models::FluxTransformer2DModel>> transformers;
  std::vector<FluxSequenceParallel> splits;
  for (int rank = 0; rank < degree; ++rank) {
    absl::StatusOr<std::shared_ptr<models::FluxTransformer2DModel>> model =
        models::LoadFluxTransformer2DModel(
            golden.dir(),
            std::make_shared<parallel::RingAttention>(groups[rank]),
            models::Placement{});
    ASSERT_TRUE(model.ok()) << model.status();
    transformers.push_back(*model);
    absl::StatusOr<parallel::SequenceSharding> sharding =
        parallel::SequenceSharding::Create(shapes, degree, rank);
    ASSERT_TRUE(sharding.ok()) << sharding.status();
    splits.push_back({.sharding = *sharding, .group = groups[rank]});
  }
  std::vector<absl::StatusOr<at::Tensor>> outputs(
      degree, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < degree; ++rank) {
    threads.emplace_back([&, rank] {
      torch::NoGradGuard thread_no_grad;
      outputs[rank] =
          ShardedFluxForward(*transformers[rank], inputs, splits[rank]);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < degree; ++rank) {
    ASSERT_TRUE(outputs[rank].ok()) << outputs[rank].status();
    // Float32 summation order only (log-sum-exp merge of the ring blocks).
    EXPECT_TRUE(AllClose(*outputs[rank], *expected, {1e-5, 1e-5}))
        << "rank " << rank;
  }
}

// 2 divides the 24 tokens (no padding, no key mask); 5 pads them to 25.
INSTANTIATE_TEST_SUITE_P(RingDegrees, ShardedFluxForwardTest,
                         ::testing::Values(2, 5));

TEST(ShardedFluxForwardErrorsTest, SplitOfAnotherSequenceLengthIsAnError) {
  const GoldenCase golden("models/flux_dev");
  absl::StatusOr<std::shared_ptr<models::FluxTransformer2DModel>> model =
      models::LoadFluxTransformer2DModel(
          golden.dir(), std::make_shared<parallel::LocalAttention>(),
          models::Placement{});
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<parallel::SequenceSharding> sharding =
      parallel::SequenceSharding::Create(ShapesFor(30, 2), 2, 0);
  ASSERT_TRUE(sharding.ok()) << sharding.status();
  absl::StatusOr<at::Tensor> output =
      ShardedFluxForward(**model, FluxGoldenInputs(golden, /*guidance=*/true),
                         {.sharding = *sharding, .group = {}});
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(output.status().message(),
              HasSubstr("8 text + 16 image tokens = 24; the sequence-parallel "
                        "split (shapes.sequence_tokens) is for 30"));
}

}  // namespace
}  // namespace ditserve::pipelines
