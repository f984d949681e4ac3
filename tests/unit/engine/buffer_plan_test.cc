#include "core/engine/buffer_plan.h"

#include <ATen/ATen.h>

#include <string>

#include "absl/status/status.h"
#include "core/engine/receive_buffers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/frozen_test_config.h"
#include "tests/support/reference_specs.h"

namespace ditserve::engine {
namespace {

using ::ditserve::testing::FreezeTestConfig;
using ::ditserve::testing::FullSizeSpec;
using ::ditserve::testing::TestConfigRequest;
using ::ditserve::testing::TestParallelConfig;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// FLUX-like: 2x2-packed tokens of 16 latent channels, a text stream.
constexpr families::ModelDimensions kDimensions{
    .hidden_size = 8, .token_output_channels = 4 * 16};

v1::InputConfig Frozen(int world, int prompts, int max_sequence_length) {
  absl::StatusOr<v1::ParallelConfig> parallel = TestParallelConfig(world);
  EXPECT_TRUE(parallel.ok()) << parallel.status();
  TestConfigRequest request;
  request.prompts = prompts;
  request.max_sequence_length = max_sequence_length;
  absl::StatusOr<v1::InputConfig> config = FreezeTestConfig(request, *parallel);
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

TEST(BufferPlanTest, RankZeroReceivesTheDpLatentsAndTheOutput) {
  const v1::InputConfig config = Frozen(4, 3, 256);
  absl::StatusOr<BufferPlan> plan =
      PlanBuffers(config, dist::MeshCoordinates{}, kDimensions);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const v1::DerivedShapes& shapes = config.shapes();
  ASSERT_EQ(shapes.max_batch_per_dp_group(), 2);
  EXPECT_THAT(plan->Find(kSequenceGather)->shape,
              ElementsAre(2, 2, shapes.shard_tokens(), 4 * 16));
  EXPECT_THAT(
      plan->Find(kDpLatentsGather)->shape,
      ElementsAre(2, 2, 16, shapes.latent_height(), shapes.latent_width()));
  EXPECT_THAT(
      plan->Find(kOutputLatents)->shape,
      ElementsAre(3, 16, shapes.latent_height(), shapes.latent_width()));
}

TEST(BufferPlanTest, OtherRanksHaveNoOutputBuffers) {
  absl::StatusOr<BufferPlan> plan =
      PlanBuffers(Frozen(4, 2, 256), {.dp = 1, .ulysses = 1}, kDimensions);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_NE(plan->Find(kSequenceGather), nullptr);
  EXPECT_EQ(plan->Find(kOutputLatents), nullptr);
  EXPECT_EQ(plan->Find(kDpLatentsGather), nullptr);
}

TEST(BufferPlanTest, ShardTokensFollowTheSequenceLength) {
  absl::StatusOr<BufferPlan> short_plan =
      PlanBuffers(Frozen(2, 1, 256), {}, kDimensions);
  absl::StatusOr<BufferPlan> long_plan =
      PlanBuffers(Frozen(2, 1, 512), {}, kDimensions);
  ASSERT_TRUE(short_plan.ok() && long_plan.ok());
  // 128 px → 8 × 8 patches = 64 image tokens; ulysses 2 halves the sequence.
  EXPECT_THAT(short_plan->Find(kSequenceGather)->shape,
              ElementsAre(2, 1, (256 + 64) / 2, 4 * 16));
  EXPECT_THAT(long_plan->Find(kSequenceGather)->shape,
              ElementsAre(2, 1, (512 + 64) / 2, 4 * 16));
}

TEST(BufferPlanTest, SequenceGatherNeedsTheModelsOutputChannels) {
  absl::StatusOr<BufferPlan> plan =
      PlanBuffers(Frozen(2, 1, 256), {}, {.hidden_size = 8});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("token_output_channels 0 must be positive to plan the "
                        "gather of ring 1 × ulysses 2"));
}

v1::InputConfig FrozenPipeFusion(int stages, int max_sequence_length,
                                 int warmup_steps = 1, int ring = 1) {
  config::ParallelFlags flags;
  flags.pipefusion_degree = stages;
  flags.warmup_steps = warmup_steps;
  flags.ring_degree = ring;
  absl::StatusOr<v1::ParallelConfig> parallel =
      config::MakeParallelConfig(flags, stages * ring);
  EXPECT_TRUE(parallel.ok()) << parallel.status();
  TestConfigRequest request;
  request.prompts = 1;
  request.max_sequence_length = max_sequence_length;
  absl::StatusOr<v1::InputConfig> config = FreezeTestConfig(request, *parallel);
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

TEST(BufferPlanTest, SequenceOutputsAreGatheredOnlyUnderSequenceParallelism) {
  absl::StatusOr<BufferPlan> one_rank =
      PlanBuffers(Frozen(1, 1, 256), {}, kDimensions);
  ASSERT_TRUE(one_rank.ok()) << one_rank.status();
  EXPECT_EQ(one_rank->Find(kSequenceGather), nullptr);
  // PipeFusion stages split each forward themselves.
  absl::StatusOr<BufferPlan> staged =
      PlanBuffers(FrozenPipeFusion(2, 256, 1, /*ring=*/2), {}, kDimensions);
  ASSERT_TRUE(staged.ok()) << staged.status();
  EXPECT_EQ(staged->Find(kSequenceGather), nullptr);
}

TEST(BufferPlanTest, PipeFusionStagesReceiveStreamsAndTheNoisePrediction) {
  const v1::InputConfig config = FrozenPipeFusion(3, 512);
  const v1::DerivedShapes& shapes = config.shapes();
  absl::StatusOr<BufferPlan> first = PlanBuffers(config, {}, kDimensions);
  absl::StatusOr<BufferPlan> middle =
      PlanBuffers(config, {.pp = 1}, kDimensions);
  absl::StatusOr<BufferPlan> last = PlanBuffers(config, {.pp = 2}, kDimensions);
  ASSERT_TRUE(first.ok() && middle.ok() && last.ok());

  // The first stage embeds; the last one predicts.
  EXPECT_EQ(first->Find(kStageTextStream), nullptr);
  EXPECT_EQ(last->Find(kStageNoisePrediction), nullptr);
  EXPECT_THAT(middle->Find(kStageTextStream)->shape,
              ElementsAre(1, shapes.text_tokens(), 8));
  EXPECT_THAT(middle->Find(kStageTextStream)->sized_by,
              HasSubstr("max_sequence_length 512"));
  EXPECT_THAT(last->Find(kStageImageStream)->shape,
              ElementsAre(1, shapes.image_tokens(), 8));
  EXPECT_THAT(first->Find(kStageNoisePrediction)->shape,
              ElementsAre(1, shapes.image_tokens(), 4 * 16));
  EXPECT_NE(middle->Find(kStageNoisePrediction), nullptr);
}

TEST(BufferPlanTest, PatchPipelineStagesReceiveEachPatchInItsOwnBuffer) {
  // 2 steps, 1 warm-up step: the second step runs the patch pipeline.
  const v1::InputConfig config = FrozenPipeFusion(3, 256);
  const auto& offsets = config.shapes().pipefusion_patch_token_offsets();
  ASSERT_EQ(offsets.size(), 4);
  absl::StatusOr<BufferPlan> first = PlanBuffers(config, {}, kDimensions);
  absl::StatusOr<BufferPlan> last = PlanBuffers(config, {.pp = 2}, kDimensions);
  ASSERT_TRUE(first.ok() && last.ok());
  for (int patch = 0; patch < 3; ++patch) {
    const int64_t tokens = offsets[patch + 1] - offsets[patch];
    const BufferSpec* image = last->Find(PatchBuffer(kStageImageStream, patch));
    ASSERT_NE(image, nullptr) << "patch " << patch;
    EXPECT_THAT(image->shape, ElementsAre(1, tokens, 8));
    EXPECT_THAT(image->sized_by, HasSubstr("pipefusion_patch_token_offsets"));
    const BufferSpec* noise =
        first->Find(PatchBuffer(kStageNoisePrediction, patch));
    ASSERT_NE(noise, nullptr) << "patch " << patch;
    EXPECT_THAT(noise->shape, ElementsAre(1, tokens, 64));
    EXPECT_EQ(first->Find(PatchBuffer(kStageImageStream, patch)), nullptr);
  }
}

TEST(BufferPlanTest, SequenceParallelStagesReceiveTheirShareOfTheTokens) {
  const v1::InputConfig config =
      FrozenPipeFusion(2, 256, /*warmup_steps=*/1, /*ring=*/3);
  const v1::DerivedShapes& shapes = config.shapes();
  absl::StatusOr<BufferPlan> first =
      PlanBuffers(config, {.ring = 2}, kDimensions);
  absl::StatusOr<BufferPlan> last =
      PlanBuffers(config, {.pp = 1, .ring = 1}, kDimensions);
  ASSERT_TRUE(first.ok() && last.ok());
  const auto share = [](int64_t tokens) { return (tokens + 2) / 3; };
  // Every sp rank receives the whole text stream with its share of the
  // image tokens.
  EXPECT_THAT(last->Find(kStageTextStream)->shape,
              ElementsAre(1, shapes.text_tokens(), 8));
  EXPECT_THAT(last->Find(kStageImageStream)->shape,
              ElementsAre(1, share(shapes.image_tokens()), 8));
  EXPECT_THAT(last->Find(kStageImageStream)->sized_by,
              HasSubstr("shared by ring 3 × ulysses 1"));
  EXPECT_THAT(first->Find(kStageNoisePrediction)->shape,
              ElementsAre(1, share(shapes.image_tokens()), 64));
  const auto& offsets = shapes.pipefusion_patch_token_offsets();
  for (int patch = 0; patch < 2; ++patch) {
    EXPECT_THAT(first->Find(PatchBuffer(kStageNoisePrediction, patch))->shape,
                ElementsAre(1, share(offsets[patch + 1] - offsets[patch]), 64));
  }
}

TEST(BufferPlanTest, PatchBuffersDoNotDependOnTheStepCount) {
  // Steps are not part of the shape key: a request whose steps are all
  // warm-up steps prepares the buffers the next one's patch steps use.
  absl::StatusOr<BufferPlan> warm_only = PlanBuffers(
      FrozenPipeFusion(2, 256, /*warmup_steps=*/2), {.pp = 1}, kDimensions);
  ASSERT_TRUE(warm_only.ok()) << warm_only.status();
  EXPECT_NE(warm_only->Find(PatchBuffer(kStageImageStream, 0)), nullptr);
  EXPECT_NE(warm_only->Find(PatchBuffer(kStageImageStream, 1)), nullptr);
}

TEST(BufferPlanTest, WithoutPipeFusionNoStageBuffers) {
  absl::StatusOr<BufferPlan> plan =
      PlanBuffers(Frozen(2, 1, 256), {.ulysses = 1}, kDimensions);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->Find(kStageTextStream), nullptr);
  EXPECT_EQ(plan->Find(kStageImageStream), nullptr);
  EXPECT_EQ(plan->Find(kStageNoisePrediction), nullptr);
}

TEST(BufferPlanTest, NonPositiveHiddenSizeIsRejected) {
  absl::StatusOr<BufferPlan> plan =
      PlanBuffers(Frozen(1, 1, 256), {}, {.hidden_size = 0});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("hidden_size 0 must be positive"));
}

// A PixArt-Σ config (learned sigma: 8 output channels) of `prompts` 128-pixel
// images on dp × cfg × pp ranks.
v1::InputConfig FrozenPixArt(int dp, int cfg, int prompts, int pp = 1) {
  absl::StatusOr<v1::ParallelConfig> parallel = config::MakeParallelConfig(
      {.dp_degree = dp, .cfg_degree = cfg, .pipefusion_degree = pp},
      dp * cfg * pp);
  EXPECT_TRUE(parallel.ok()) << parallel.status();
  v1::GenerateRequest request;
  for (int i = 0; i < prompts; ++i) request.add_prompt("a fox");
  request.set_height(128);
  request.set_width(128);
  request.set_use_resolution_binning(false);
  absl::StatusOr<v1::InputConfig> config = config::Freeze(
      request, FullSizeSpec(families::kPixArtSigmaDefaults),
      config::ServerOptions{}, *parallel, config::FreezeContext{});
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

constexpr families::ModelDimensions kPixArtDimensions{
    .hidden_size = 8,
    .transformer_out_channels = 8,
    .token_output_channels = 2 * 2 * 8,
    .stages_pass_text_stream = false};

TEST(BufferPlanTest, PixArtStagesPassNoTextAndBothGuidanceBranches) {
  // One prompt, both guidance branches on each rank: 2 rows.
  const v1::InputConfig config = FrozenPixArt(1, 1, 1, /*pp=*/2);
  const int64_t image_tokens = config.shapes().image_tokens();
  absl::StatusOr<BufferPlan> first = PlanBuffers(config, {}, kPixArtDimensions);
  absl::StatusOr<BufferPlan> last =
      PlanBuffers(config, {.pp = 1}, kPixArtDimensions);
  ASSERT_TRUE(first.ok() && last.ok());
  EXPECT_EQ(last->Find(kStageTextStream), nullptr);
  EXPECT_THAT(last->Find(kStageImageStream)->shape,
              ElementsAre(2, image_tokens, 8));
  EXPECT_THAT(last->Find(kStageImageStream)->sized_by,
              HasSubstr("shapes.branches_per_cfg_rank 2"));
  EXPECT_THAT(first->Find(kStageNoisePrediction)->shape,
              ElementsAre(2, image_tokens, 32));
  EXPECT_THAT(first->Find(kStageNoisePrediction)->sized_by,
              HasSubstr("model token_output_channels 32"));
}

TEST(BufferPlanTest, PipeFusionWithoutTokenOutputChannelsIsAnError) {
  absl::StatusOr<BufferPlan> plan =
      PlanBuffers(FrozenPixArt(1, 1, 1, /*pp=*/2), {}, {.hidden_size = 8});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("token_output_channels 0 must be positive"));
}

TEST(BufferPlanTest, CfgRanksGatherOneStepOutputPerBranch) {
  // Three prompts over two dp groups: the larger group runs two.
  absl::StatusOr<BufferPlan> plan = PlanBuffers(
      FrozenPixArt(2, 2, 3), {.dp = 1, .cfg = 1}, kPixArtDimensions);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_NE(plan->Find(kCfgBranchGather), nullptr);
  EXPECT_THAT(plan->Find(kCfgBranchGather)->shape,
              ElementsAre(2, 2, 8, 128 / 8, 128 / 8));
  EXPECT_THAT(plan->Find(kCfgBranchGather)->sized_by,
              HasSubstr("model transformer_out_channels 8"));
}

TEST(BufferPlanTest, WithoutCfgParallelThereIsNoBranchExchange) {
  absl::StatusOr<BufferPlan> plan =
      PlanBuffers(FrozenPixArt(2, 1, 3), {}, kPixArtDimensions);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->Find(kCfgBranchGather), nullptr);
}

TEST(BufferPlanTest, CfgParallelNeedsTheTransformerOutputChannels) {
  absl::StatusOr<BufferPlan> plan =
      PlanBuffers(FrozenPixArt(1, 2, 1), {}, {.hidden_size = 8});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()),
              HasSubstr("transformer_out_channels 0 must be positive"));
}

TEST(ReceiveBuffersTest, IncomingSizeOtherThanPlannedNamesTheConfigFields) {
  absl::StatusOr<BufferPlan> plan =
      PlanBuffers(Frozen(2, 1, 256), {}, kDimensions);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<ReceiveBuffers> buffers =
      ReceiveBuffers::Allocate(*plan, at::TensorOptions(at::kFloat));
  ASSERT_TRUE(buffers.ok()) << buffers.status();
  // What a rank that froze max_sequence_length 512 would send.
  absl::StatusOr<at::Tensor> received =
      buffers->ForIncoming(kSequenceGather, {2, 1, (512 + 64) / 2, 64});
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.status().code(), absl::StatusCode::kInternal);
  const std::string message(received.status().message());
  EXPECT_THAT(message,
              HasSubstr("received [2, 1, 288, 64] into sequence_gather, "
                        "planned as [2, 1, 160, 64]"));
  EXPECT_THAT(message, HasSubstr("shapes.shard_tokens 160"));
  EXPECT_THAT(message, HasSubstr("max_sequence_length 256"));
}

TEST(ReceiveBuffersTest, PlannedSizeIsAccepted) {
  absl::StatusOr<BufferPlan> plan =
      PlanBuffers(Frozen(2, 1, 256), {}, kDimensions);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<ReceiveBuffers> buffers =
      ReceiveBuffers::Allocate(*plan, at::TensorOptions(at::kFloat));
  ASSERT_TRUE(buffers.ok()) << buffers.status();
  absl::StatusOr<at::Tensor> received =
      buffers->ForIncoming(kSequenceGather, {2, 1, 160, 64});
  ASSERT_TRUE(received.ok()) << received.status();
  EXPECT_THAT(received->sizes().vec(), ElementsAre(2, 1, 160, 64));
}

}  // namespace
}  // namespace ditserve::engine
