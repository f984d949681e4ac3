#include "core/families/flux/flux_checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>

#include "core/base/json.h"
#include "core/engine/family_registry.h"
#include "tests/unit/checkpoints/checkpoint_folder_test.h"

namespace ditserve::checkpoints {
namespace {

using ::testing::HasSubstr;

using FluxCheckpointTest = CheckpointFolderTest;

TEST_F(FluxCheckpointTest, TinyDevCheckpointLoadsAndGenerates) {
  const std::string dir = WriteTiny(families::kFluxDevDefaults, 0, "dev");
  ExpectGeneratesFromPrompts(families::kFluxDevDefaults, dir, 3.5F);
}

TEST_F(FluxCheckpointTest, TinyAdmitsEveryParallelConfigurationUpToFourRanks) {
  const std::string dir = WriteTiny(families::kFluxDevDefaults, 0, "dev");
  absl::StatusOr<config::ModelSpec> spec = engine::ReadModelSpec(dir);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->defaults.name, families::kFluxDevDefaults.name);
  EXPECT_EQ(spec->num_attention_heads % 4, 0);
  EXPECT_GE(spec->num_layers, 4);
  EXPECT_EQ(spec->vae_scale_factor, 8);
  EXPECT_EQ(spec->latent_channels, 16);
}

TEST_F(FluxCheckpointTest, SchnellHasNoGuidanceEmbeddingAndStaticShift) {
  const std::string dir =
      WriteTiny(families::kFluxSchnellDefaults, 0, "schnell");
  absl::StatusOr<config::ModelSpec> spec = engine::ReadModelSpec(dir);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->defaults.name, families::kFluxSchnellDefaults.name);
  absl::StatusOr<nlohmann::json> scheduler =
      base::ReadJsonObjectFile(dir + "/scheduler/scheduler_config.json");
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  EXPECT_EQ((*scheduler)["use_dynamic_shifting"], false);
  EXPECT_EQ((*scheduler)["shift"], 1.0);
}

TEST_F(FluxCheckpointTest, SameSeedGivesIdenticalWeights) {
  const std::string a = WriteTiny(families::kFluxDevDefaults, 3, "a");
  const std::string b = WriteTiny(families::kFluxDevDefaults, 3, "b");
  const std::string c = WriteTiny(families::kFluxDevDefaults, 4, "c");
  const std::string weights =
      "/transformer/diffusion_pytorch_model.safetensors";
  EXPECT_EQ(Bytes(a + weights), Bytes(b + weights));
  EXPECT_NE(Bytes(a + weights), Bytes(c + weights));
  const std::string vae = "/vae/diffusion_pytorch_model.safetensors";
  EXPECT_EQ(Bytes(a + vae), Bytes(b + vae));
}

TEST(CheckpointPresetTest, UnknownPresetNamesTheKnownOnes) {
  absl::StatusOr<CheckpointPreset> preset = ParseCheckpointPreset("huge");
  EXPECT_EQ(preset.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(preset.status().message(), HasSubstr("expected tiny or small"));
}

TEST(CheckpointPresetTest, NonFluxModelIsRejected) {
  absl::StatusOr<FluxCheckpointConfigs> configs = FluxPresetConfigs(
      families::kPixArtSigmaDefaults, CheckpointPreset::kTiny);
  EXPECT_EQ(configs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(configs.status().message(),
              HasSubstr("pixart-sigma is not a FLUX model"));
}

}  // namespace
}  // namespace ditserve::checkpoints
