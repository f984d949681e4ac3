#include "core/pipelines/flux/flux_sequence_parallel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <vector>

#include "core/models/flux/flux_transformer_loader.h"
#include "core/parallel/local_attention.h"
#include "core/parallel/ring_attention.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::pipelines {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::testing::HasSubstr;

constexpr std::chrono::milliseconds kTimeout{30000};

// The sp groups of `degree` ranks run as threads of this process: real Gloo
// groups over loopback that meet in an in-memory store.
std::vector<parallel::Group> ThreadRankGroups(int degree) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<parallel::Group> groups(degree);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < degree; ++rank) {
    threads.emplace_back([&, rank] {
      auto options = c10d::ProcessGroupGloo::Options::create(kTimeout);
      options->devices.push_back(
          c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      groups[rank] = {.group = c10::make_intrusive<c10d::ProcessGroupGloo>(
                          c10::make_intrusive<c10d::PrefixStore>("sp", store),
                          rank, degree, options),
                      .context = {.group_name = "sp", .timeout = kTimeout}};
    });
  }
  for (std::thread& thread : threads) thread.join();
  return groups;
}

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

models::FluxTransformerInputs GoldenInputs(const GoldenCase& golden) {
  models::FluxTransformerInputs inputs;
  inputs.hidden_states = golden.Input("hidden_states");
  inputs.encoder_hidden_states = golden.Input("encoder_hidden_states");
  inputs.pooled_projections = golden.Input("pooled_projections");
  inputs.timestep = golden.Input("timestep");
  inputs.img_ids = golden.Input("img_ids");
  inputs.txt_ids = golden.Input("txt_ids");
  inputs.guidance = golden.Input("guidance");
  return inputs;
}

class ShardedFluxForwardTest : public ::testing::TestWithParam<int> {};

TEST_P(ShardedFluxForwardTest, EveryRankGetsTheUnshardedForward) {
  const int degree = GetParam();
  const GoldenCase golden("models/flux_dev");
  const models::FluxTransformerInputs inputs = GoldenInputs(golden);
  absl::StatusOr<std::shared_ptr<models::FluxTransformer2DModel>> reference =
      models::LoadFluxTransformer2DModel(
          golden.dir(), std::make_shared<parallel::LocalAttention>(),
          models::Placement{});
  ASSERT_TRUE(reference.ok()) << reference.status();
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> expected = (*reference)->Forward(inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();

  // 8 text + 16 image tokens.
  const v1::DerivedShapes shapes = ShapesFor(24, degree);
  std::vector<parallel::Group> groups = ThreadRankGroups(degree);
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
  absl::StatusOr<at::Tensor> output = ShardedFluxForward(
      **model, GoldenInputs(golden), {.sharding = *sharding, .group = {}});
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(output.status().message(),
              HasSubstr("8 text + 16 image tokens = 24; the sequence-parallel "
                        "split (shapes.sequence_tokens) is for 30"));
}

}  // namespace
}  // namespace ditserve::pipelines
