#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/config/freeze.h"
#include "core/config/parallel_config.h"
#include "core/config/server_options.h"
#include "core/engine/family_registry.h"
#include "core/families/flux/flux_defaults.h"
#include "core/families/pixart/pixart_defaults.h"
#include "core/families/sd3/sd3_defaults.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::config {
namespace {

using ::testing::HasSubstr;

std::string GoldenPipeline(const std::string& name) {
  return std::string(DITSERVE_TEST_DATA_DIR) + "/golden/pipelines/" + name;
}

TEST(ReadModelSpecTest, FluxDevCountsBothBlockKindsAndThePacking) {
  absl::StatusOr<ModelSpec> spec =
      engine::ReadModelSpec(GoldenPipeline("flux_dev"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->defaults.name, families::kFluxDevDefaults.name);
  EXPECT_EQ(spec->num_layers, 3);  // 1 double-stream + 2 single-stream
  EXPECT_EQ(spec->num_attention_heads, 2);
  EXPECT_EQ(spec->patch_size, 2);
  EXPECT_EQ(spec->latent_channels, 16);
  EXPECT_EQ(spec->vae_scale_factor, 4);  // three VAE blocks
  EXPECT_EQ(spec->attention_head_dim, 16);
  EXPECT_EQ(spec->vae_block_out_channels, (std::vector<int>{16, 32, 32}));
  // sample_size 32: tiles of 8 latent pixels stepping 6 (24 pixels, the 32
  // less the 8 each blends).
  EXPECT_EQ(spec->vae_tile_height, 32);
  EXPECT_EQ(spec->vae_tile_width, 32);
  EXPECT_EQ(spec->vae_tiling_refusal, "");
}

TEST(ReadModelSpecTest, CogVideoXTinyVaeHasNoTilesAndSaysWhy) {
  absl::StatusOr<ModelSpec> spec =
      engine::ReadModelSpec(GoldenPipeline("cogvideox_5b"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->vae_tile_height, 0);
  EXPECT_THAT(spec->vae_tiling_refusal,
              HasSubstr("tiles of 16x16 pixels overlapping by"));
}

// The scheduler reported is the one the folder's config names and the
// family runs.
TEST(ReadModelSpecTest, CogVideoXReportsTheSchedulerOfItsFolder) {
  absl::StatusOr<ModelSpec> ddim =
      engine::ReadModelSpec(GoldenPipeline("cogvideox_5b"));
  ASSERT_TRUE(ddim.ok()) << ddim.status();
  EXPECT_EQ(ddim->defaults.scheduler, v1::SCHEDULER_KIND_COGVIDEOX_DDIM);
  absl::StatusOr<ModelSpec> dpm =
      engine::ReadModelSpec(GoldenPipeline("cogvideox15"));
  ASSERT_TRUE(dpm.ok()) << dpm.status();
  EXPECT_EQ(dpm->defaults.scheduler, v1::SCHEDULER_KIND_COGVIDEOX_DPM);
}

TEST(ReadModelSpecTest, FluxWithoutGuidanceEmbedsIsSchnell) {
  absl::StatusOr<ModelSpec> spec =
      engine::ReadModelSpec(GoldenPipeline("flux_schnell"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->defaults.name, families::kFluxSchnellDefaults.name);
}

TEST(ReadModelSpecTest, Sd3AndPixArtSigmaAreDetected) {
  absl::StatusOr<ModelSpec> sd3 = engine::ReadModelSpec(GoldenPipeline("sd3"));
  ASSERT_TRUE(sd3.ok()) << sd3.status();
  EXPECT_EQ(sd3->defaults.name, families::kSD3MediumDefaults.name);
  EXPECT_EQ(sd3->num_layers, 2);
  EXPECT_EQ(sd3->patch_size, 2);
  absl::StatusOr<ModelSpec> pixart =
      engine::ReadModelSpec(GoldenPipeline("pixart_sigma"));
  ASSERT_TRUE(pixart.ok()) << pixart.status();
  EXPECT_EQ(pixart->defaults.name, families::kPixArtSigmaDefaults.name);
  EXPECT_EQ(pixart->latent_channels, 4);
  // The binning table is picked by the transformer's sample_size.
  EXPECT_EQ(pixart->sample_size, 8);
  // The default size is the trained one, sample_size × the VAE's scale (4
  // for these 3-level VAEs), as diffusers' pipelines default it; the
  // defaults rows hold the 1024² models'.
  EXPECT_EQ(sd3->defaults.height, 16 * 4);
  EXPECT_EQ(sd3->defaults.width, 16 * 4);
  EXPECT_EQ(pixart->defaults.height, 8 * 4);
  EXPECT_EQ(pixart->defaults.width, 8 * 4);
}

// SD3 crops its positions from a square table of pos_embed_max_size
// patches: Freeze refuses a side past it, naming the field, where every
// rank's transformer refused it after the queue.
TEST(ReadModelSpecTest, Sd3SidesStopAtItsPositionTable) {
  absl::StatusOr<ModelSpec> sd3 = engine::ReadModelSpec(GoldenPipeline("sd3"));
  ASSERT_TRUE(sd3.ok()) << sd3.status();
  // 16 patches of 2 latent pixels, each 4 image pixels.
  EXPECT_EQ(sd3->max_height, 128);
  EXPECT_EQ(sd3->max_width, 128);
  absl::StatusOr<v1::ParallelConfig> parallel =
      config::MakeParallelConfig({}, 1);
  ASSERT_TRUE(parallel.ok()) << parallel.status();
  v1::GenerateRequest request;
  request.add_prompt("a lighthouse");
  request.set_height(128);
  request.set_width(136);
  const absl::StatusOr<v1::InputConfig> refused =
      config::Freeze(request, *sd3, config::ServerOptions{}, *parallel,
                     config::FreezeContext{});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("width 136 is out of range; allowed 8 to 128 pixels "
                        "(the most the model's positions cover)"));
  request.set_width(128);
  EXPECT_TRUE(config::Freeze(request, *sd3, config::ServerOptions{}, *parallel,
                             config::FreezeContext{})
                  .ok());
}

class BrokenCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ditserve_spec_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "transformer");
    std::filesystem::create_directories(dir_ / "vae");
    Write("model_index.json", R"({"_class_name": "StableDiffusion3Pipeline"})");
    Write("transformer/config.json",
          R"({"num_layers": 2, "num_attention_heads": 2, "patch_size": 2,
              "attention_head_dim": 8, "sample_size": 128,
              "pos_embed_max_size": 192})");
    Write("vae/config.json",
          R"({"latent_channels": 16, "block_out_channels": [8, 8, 8, 8],
              "out_channels": 3, "layers_per_block": 1, "norm_num_groups": 4,
              "act_fn": "silu", "scaling_factor": 1.5305, "sample_size": 1024,
              "in_channels": 3,
              "down_block_types": ["DownEncoderBlock2D", "DownEncoderBlock2D",
                                   "DownEncoderBlock2D", "DownEncoderBlock2D"],
              "up_block_types": ["UpDecoderBlock2D", "UpDecoderBlock2D",
                                 "UpDecoderBlock2D", "UpDecoderBlock2D"]})");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }

  std::filesystem::path dir_;
};

TEST_F(BrokenCheckpointTest, WellFormedFolderIsRead) {
  absl::StatusOr<ModelSpec> spec = engine::ReadModelSpec(dir_.string());
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->vae_scale_factor, 8);
  EXPECT_EQ(spec->vae_tile_width, 1024);
  // SD3-medium's 128 latent pixels a side.
  EXPECT_EQ(spec->defaults.height, 1024);
  // Its position table's 192 patches of 2 latent pixels.
  EXPECT_EQ(spec->max_height, 3072);
  EXPECT_EQ(spec->max_width, 3072);
}

// SD3's default size comes from it, as the model needs it to load.
TEST_F(BrokenCheckpointTest, Sd3WithoutSampleSizeIsNamed) {
  Write("transformer/config.json",
        R"({"num_layers": 2, "num_attention_heads": 2, "patch_size": 2,
            "attention_head_dim": 8})");
  absl::StatusOr<ModelSpec> spec = engine::ReadModelSpec(dir_.string());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(),
              HasSubstr("transformer/config.json: \"sample_size\""));
}

TEST_F(BrokenCheckpointTest, MissingFileIsNamed) {
  std::filesystem::remove(dir_ / "vae/config.json");
  absl::StatusOr<ModelSpec> spec = engine::ReadModelSpec(dir_.string());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(spec.status().message(), HasSubstr("vae/config.json"));
}

TEST_F(BrokenCheckpointTest, UnknownPipelineIsNamed) {
  Write("model_index.json", R"({"_class_name": "KandinskyPipeline"})");
  absl::StatusOr<ModelSpec> spec = engine::ReadModelSpec(dir_.string());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("\"KandinskyPipeline\""));
  EXPECT_THAT(spec.status().message(),
              HasSubstr("known: FluxPipeline, PixArtAlphaPipeline, "
                        "PixArtSigmaPipeline, StableDiffusion3Pipeline"));
}

TEST_F(BrokenCheckpointTest, BadJsonIsNamed) {
  Write("transformer/config.json", "{not json");
  absl::StatusOr<ModelSpec> spec = engine::ReadModelSpec(dir_.string());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(),
              HasSubstr("transformer/config.json is not valid JSON"));
}

TEST_F(BrokenCheckpointTest, JsonThatIsNotAnObjectIsNamed) {
  Write("vae/config.json", "[8, 8]");
  absl::StatusOr<ModelSpec> spec = engine::ReadModelSpec(dir_.string());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(),
              HasSubstr("vae/config.json holds array; expected a JSON object"));
}

TEST_F(BrokenCheckpointTest, NonPositiveDimensionIsNamed) {
  Write("transformer/config.json",
        R"({"num_layers": 0, "num_attention_heads": 2, "patch_size": 2,
            "attention_head_dim": 8})");
  absl::StatusOr<ModelSpec> spec = engine::ReadModelSpec(dir_.string());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(),
              HasSubstr("\"num_layers\" must be a positive integer, got 0"));
}

TEST_F(BrokenCheckpointTest, ADimensionPastAnIntIsNamed) {
  Write("transformer/config.json",
        R"({"num_layers": 2, "num_attention_heads": 4294967298,
            "patch_size": 2, "attention_head_dim": 8})");
  absl::StatusOr<ModelSpec> spec = engine::ReadModelSpec(dir_.string());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(),
              HasSubstr("\"num_attention_heads\" must be at most 2147483647, "
                        "got 4294967298"));
}

TEST_F(BrokenCheckpointTest, AClassNameThatIsNoStringIsNamed) {
  Write("model_index.json", R"({"_class_name": 5})");
  absl::StatusOr<ModelSpec> spec = engine::ReadModelSpec(dir_.string());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(),
              HasSubstr("model_index.json: \"_class_name\" must be a "
                        "string, got 5"));
}

// A FIFO in a file's place would hold the read until a writer came.
TEST_F(BrokenCheckpointTest, AFifoForAConfigIsRefusedNotWaitedOn) {
  std::filesystem::remove(dir_ / "vae/config.json");
  ASSERT_EQ(::mkfifo((dir_ / "vae/config.json").c_str(), 0600), 0);
  absl::StatusOr<ModelSpec> spec = engine::ReadModelSpec(dir_.string());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(),
              HasSubstr("vae/config.json is not a regular file"));
}

TEST_F(BrokenCheckpointTest, NonPositiveVaeWidthIsNamed) {
  Write("vae/config.json",
        R"({"latent_channels": 16, "block_out_channels": [8, 0, 8, 8]})");
  absl::StatusOr<ModelSpec> spec = engine::ReadModelSpec(dir_.string());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(),
              HasSubstr("\"block_out_channels\" must hold positive integers"));
}

}  // namespace
}  // namespace ditserve::config
