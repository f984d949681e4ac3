#include "core/config/parallel_config.h"

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/reference_specs.h"

namespace ditserve::config {
namespace {

using ::ditserve::testing::FullSizeSpec;
using ::testing::HasSubstr;

ModelSpec TinySpec(const ModelDefaults& model, int heads, int layers) {
  ModelSpec spec = FullSizeSpec(model);
  spec.num_attention_heads = heads;
  spec.num_layers = layers;
  return spec;
}

TEST(ParallelConfigTest, SingleRankDefaultsAreExplicit) {
  absl::StatusOr<v1::ParallelConfig> config = MakeParallelConfig({}, 1);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->world_size(), 1);
  EXPECT_EQ(config->dp_degree(), 1);
  EXPECT_EQ(config->num_pipeline_patch(), 1);
  EXPECT_EQ(config->warmup_steps(), 0);
}

TEST(ParallelConfigTest, WrongProductNamesEveryNumber) {
  absl::StatusOr<v1::ParallelConfig> config =
      MakeParallelConfig({.dp_degree = 1, .pipefusion_degree = 4}, 2);
  ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(),
            "dp 1 × cfg 1 × pipefusion 4 × ring 1 × ulysses 1 = 4 ≠ world "
            "size 2");
}

TEST(ParallelConfigTest, OmittedDataParallelDegreeFillsTheWorld) {
  absl::StatusOr<v1::ParallelConfig> alone = MakeParallelConfig({}, 2);
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(alone->dp_degree(), 2);
  absl::StatusOr<v1::ParallelConfig> with_others = MakeParallelConfig(
      {.cfg_degree = 2, .pipefusion_degree = 2, .ulysses_degree = 2}, 16);
  ASSERT_TRUE(with_others.ok()) << with_others.status();
  EXPECT_EQ(with_others->dp_degree(), 2);
}

TEST(ParallelConfigTest, IndivisibleWorldWithOmittedDpNamesEveryDegree) {
  absl::StatusOr<v1::ParallelConfig> config =
      MakeParallelConfig({.pipefusion_degree = 4}, 6);
  ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("world size 6 is not a multiple of cfg 1 × pipefusion "
                        "4 × ring 1 × ulysses 1 = 4 (--dp_degree omitted"));
}

// 65536² overflows an int to 0, which the world size was then divided by
// (SIGFPE at start-up instead of a flag error).
TEST(ParallelConfigTest, DegreesWhoseProductOverflowsAnIntAreRefused) {
  absl::StatusOr<v1::ParallelConfig> model_degrees =
      MakeParallelConfig({.ring_degree = 65536, .ulysses_degree = 65536}, 1);
  ASSERT_EQ(model_degrees.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(model_degrees.status().message(),
            "cfg 1 × pipefusion 1 × ring 65536 × ulysses 65536 exceeds the "
            "world size 1");
  absl::StatusOr<v1::ParallelConfig> with_dp = MakeParallelConfig(
      {.dp_degree = 65536, .pipefusion_degree = 2, .ulysses_degree = 32768}, 4);
  ASSERT_EQ(with_dp.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(with_dp.status().message(),
            "dp 65536 × cfg 1 × pipefusion 2 × ring 1 × ulysses 32768 exceeds "
            "the world size 4");
}

TEST(ParallelConfigTest, DegreesMustBePositive) {
  absl::StatusOr<v1::ParallelConfig> config =
      MakeParallelConfig({.ring_degree = 0}, 1);
  ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(), HasSubstr("--ring_degree 0"));
}

TEST(ParallelConfigTest, CfgDegreeAboveTwoIsRefused) {
  absl::StatusOr<v1::ParallelConfig> config =
      MakeParallelConfig({.cfg_degree = 4}, 4);
  ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(), HasSubstr("--cfg_degree 4"));
}

TEST(ParallelConfigTest, PipelinePatchesDefaultToPipefusionDegree) {
  absl::StatusOr<v1::ParallelConfig> config =
      MakeParallelConfig({.pipefusion_degree = 4}, 4);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->num_pipeline_patch(), 4);
  EXPECT_EQ(config->warmup_steps(), 1);
}

TEST(ParallelConfigTest, FewerPatchesThanStagesAreRefused) {
  absl::StatusOr<v1::ParallelConfig> config =
      MakeParallelConfig({.pipefusion_degree = 4, .num_pipeline_patch = 2}, 4);
  ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("--num_pipeline_patch 2 is smaller than "
                        "--pipefusion_degree 4"));
}

TEST(ParallelConfigTest, PatchesWithoutPipefusionAreRefused) {
  absl::StatusOr<v1::ParallelConfig> config =
      MakeParallelConfig({.num_pipeline_patch = 2}, 1);
  ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(), HasSubstr("--num_pipeline_patch 2"));
}

TEST(ParallelConfigTest, NegativeWarmupIsRefused) {
  absl::StatusOr<v1::ParallelConfig> config =
      MakeParallelConfig({.pipefusion_degree = 2, .warmup_steps = -1}, 2);
  ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(), HasSubstr("--warmup_steps -1"));
}

TEST(ParallelConfigTest, PipefusionFourOnWorldFourFitsFluxButNotThreeLayers) {
  absl::StatusOr<v1::ParallelConfig> config =
      MakeParallelConfig({.pipefusion_degree = 4}, 4);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(ValidateParallelForModel(*config,
                                       FullSizeSpec(families::kFluxDevDefaults))
                  .ok());
  absl::Status shallow = ValidateParallelForModel(
      *config, TinySpec(families::kFluxDevDefaults, /*heads=*/4, /*layers=*/3));
  ASSERT_EQ(shallow.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shallow.message(),
              HasSubstr("--pipefusion_degree 4 exceeds the 3 transformer "
                        "layers"));
}

TEST(ParallelConfigTest, UlyssesMustDivideHeads) {
  absl::StatusOr<v1::ParallelConfig> config =
      MakeParallelConfig({.ulysses_degree = 4}, 4);
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(ValidateParallelForModel(*config,
                                       FullSizeSpec(families::kFluxDevDefaults))
                  .ok());
  absl::Status s = ValidateParallelForModel(
      *config, TinySpec(families::kFluxDevDefaults, /*heads=*/6, /*layers=*/4));
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("--ulysses_degree 4 does not divide the 6 attention "
                        "heads"));
}

TEST(ParallelConfigTest, UlyssesTwoTimesRingTwoIsAccepted) {
  absl::StatusOr<v1::ParallelConfig> config =
      MakeParallelConfig({.ring_degree = 2, .ulysses_degree = 2}, 4);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(SequenceParallelDegree(*config), 4);
  EXPECT_TRUE(ValidateParallelForModel(
                  *config, FullSizeSpec(families::kSD3MediumDefaults))
                  .ok());
}

TEST(ParallelConfigTest, CfgParallelOnlyForCfgFamilies) {
  absl::StatusOr<v1::ParallelConfig> config =
      MakeParallelConfig({.cfg_degree = 2}, 2);
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(ValidateParallelForModel(
                  *config, FullSizeSpec(families::kPixArtSigmaDefaults))
                  .ok());
  absl::Status s = ValidateParallelForModel(
      *config, FullSizeSpec(families::kFluxDevDefaults));
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("--cfg_degree 2"));
  EXPECT_THAT(s.message(), HasSubstr("flux-dev uses a guidance embedding"));
}

TEST(ParallelConfigTest, PatchGridMustHaveARowPerPatch) {
  absl::StatusOr<v1::ParallelConfig> config =
      MakeParallelConfig({.pipefusion_degree = 2, .num_pipeline_patch = 64}, 2);
  ASSERT_TRUE(config.ok());
  EXPECT_TRUE(ValidateParallelForModel(*config,
                                       FullSizeSpec(families::kFluxDevDefaults))
                  .ok());
  config->set_num_pipeline_patch(65);
  absl::Status s = ValidateParallelForModel(
      *config, FullSizeSpec(families::kFluxDevDefaults));
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("exceeds the 64 patch rows"));
}

}  // namespace
}  // namespace ditserve::config
