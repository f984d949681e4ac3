#include "core/families/flux/flux_sequence_parallel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <vector>

#include "core/families/flux/flux_transformer_loader.h"
#include "core/parallel/local_attention.h"
#include "core/parallel/ring_attention.h"
#include "tests/unit/families/flux/flux_golden_inputs.h"
#include "tests/unit/families/thread_sequence_parallel.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::families {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::FluxGoldenInputs;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::RunOnRankThreads;
using ::ditserve::testing::SingleRankFluxForward;
using ::ditserve::testing::SplitShapes;
using ::ditserve::testing::ThreadSequenceParallel;
using ::testing::HasSubstr;

constexpr std::chrono::milliseconds kTimeout{30000};

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

  // 8 text + 16 image tokens of 64 output channels; the gather buffer has a
  // row more than the 2 prompts, as for a batch smaller than the largest.
  const std::vector<parallel::SequenceParallel> splits =
      ThreadSequenceParallel(24, degree, /*rows=*/3, /*channels=*/64, kTimeout);
  ASSERT_EQ(splits.size(), static_cast<size_t>(degree));
  std::vector<std::shared_ptr<models::FluxTransformer2DModel>> transformers;
  for (int rank = 0; rank < degree; ++rank) {
    absl::StatusOr<std::shared_ptr<models::FluxTransformer2DModel>> model =
        models::LoadFluxTransformer2DModel(
            golden.dir(),
            std::make_shared<parallel::RingAttention>(splits[rank].group),
            models::Placement{});
    ASSERT_TRUE(model.ok()) << model.status();
    transformers.push_back(*model);
  }
  const std::vector<absl::StatusOr<at::Tensor>> outputs =
      RunOnRankThreads(degree, [&](int rank) {
        return ShardedFluxForward(*transformers[rank], inputs, splits[rank]);
      });
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
      parallel::SequenceSharding::Create(SplitShapes(30, 2), 2, 0);
  ASSERT_TRUE(sharding.ok()) << sharding.status();
  absl::StatusOr<at::Tensor> output =
      ShardedFluxForward(**model, FluxGoldenInputs(golden, /*guidance=*/true),
                         {.sharding = *sharding, .group = {}});
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(output.status().message(),
              HasSubstr("attention sequence has 24 tokens; the "
                        "sequence-parallel split (shapes.sequence_tokens) is "
                        "for 30"));
}

}  // namespace
}  // namespace ditserve::families
