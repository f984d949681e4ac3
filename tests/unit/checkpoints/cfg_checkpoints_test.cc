// The PixArt and SD3 checkpoint writers and the checkpoint cache.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <iterator>
#include <memory>
#include <string>

#include "core/base/json.h"
#include "core/engine/family_registry.h"
#include "core/families/pixart/pixart_checkpoint.h"
#include "core/families/sd3/sd3_prompt_encoder.h"
#include "core/families/sd3/sd3_transformer_config.h"
#include "core/tokenizers/clip_tokenizer.h"
#include "tests/unit/checkpoints/checkpoint_folder_test.h"

namespace ditserve::checkpoints {
namespace {

using ::testing::HasSubstr;

using CfgCheckpointsTest = CheckpointFolderTest;

TEST_F(CfgCheckpointsTest, TinyPixArtSigmaEncodesPromptsAndGenerates) {
  const std::string dir = WriteTiny(families::kPixArtSigmaDefaults, 0, "sigma");
  absl::StatusOr<config::ModelSpec> spec = engine::ReadModelSpec(dir);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->defaults.name, families::kPixArtSigmaDefaults.name);
  EXPECT_EQ(spec->num_attention_heads % 4, 0);
  EXPECT_EQ(spec->vae_scale_factor, 8);
  EXPECT_EQ(spec->latent_channels, 4);
  // Resolution binning has a table for it.
  EXPECT_EQ(spec->sample_size, 32);

  ExpectGeneratesFromPrompts(families::kPixArtSigmaDefaults, dir, 4.5F);
}

TEST_F(CfgCheckpointsTest, PixArtAlphaTakesMicroConditions) {
  const std::string dir = WriteTiny(families::kPixArtAlphaDefaults, 0, "alpha");
  absl::StatusOr<nlohmann::json> index =
      base::ReadJsonFile(dir + "/model_index.json");
  absl::StatusOr<nlohmann::json> transformer =
      base::ReadJsonFile(dir + "/transformer/config.json");
  ASSERT_TRUE(index.ok() && transformer.ok());
  EXPECT_EQ(index->at("_class_name"), "PixArtAlphaPipeline");
  EXPECT_EQ(transformer->at("use_additional_conditions"), true);
  ExpectGeneratesFromPrompts(families::kPixArtAlphaDefaults, dir, 4.5F);
}

TEST_F(CfgCheckpointsTest, TinySd3EncodesPromptsAndGenerates) {
  const std::string dir = WriteTiny(families::kSD3MediumDefaults, 0, "sd3");
  absl::StatusOr<config::ModelSpec> spec = engine::ReadModelSpec(dir);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->defaults.name, families::kSD3MediumDefaults.name);
  EXPECT_EQ(spec->num_attention_heads % 4, 0);
  EXPECT_EQ(spec->latent_channels, 16);

  absl::StatusOr<models::SD3TransformerConfig> config =
      models::ReadSD3TransformerConfig(dir + "/transformer/config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::unique_ptr<families::SD3PromptEncoder>> encoder =
      families::SD3PromptEncoder::Load(dir, config->joint_attention_dim, {});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  absl::StatusOr<families::SD3PromptEmbeds> positive =
      (*encoder)->Encode({"a fox in the snow"}, 16);
  ASSERT_TRUE(positive.ok()) << positive.status();
  EXPECT_EQ(positive->prompt_embeds.sizes(),
            (at::IntArrayRef{1, 77 + 16, config->joint_attention_dim}));
  EXPECT_EQ(positive->pooled_prompt_embeds.sizes(),
            (at::IntArrayRef{1, config->pooled_projection_dim}));
  ExpectGeneratesFromPrompts(families::kSD3MediumDefaults, dir, 7.0F);
}

TEST_F(CfgCheckpointsTest, Sd3ClipGPadsWithTheExclamationMark) {
  const std::string dir = WriteTiny(families::kSD3MediumDefaults, 0, "sd3");
  absl::StatusOr<tokenizers::CLIPTokenizer> clip_l =
      tokenizers::CLIPTokenizer::Load(dir + "/tokenizer");
  absl::StatusOr<tokenizers::CLIPTokenizer> clip_g =
      tokenizers::CLIPTokenizer::Load(dir + "/tokenizer_2");
  absl::StatusOr<nlohmann::json> vocab =
      base::ReadJsonFile(dir + "/tokenizer_2/vocab.json");
  ASSERT_TRUE(clip_l.ok() && clip_g.ok() && vocab.ok());
  EXPECT_EQ(clip_g->pad_token_id(), vocab->at("!").get<int64_t>());
  EXPECT_EQ(clip_l->pad_token_id(), clip_l->eos_token_id());
}

TEST_F(CfgCheckpointsTest, Sd3PositionTableIsTheSincosTable) {
  const std::string dir = WriteTiny(families::kSD3MediumDefaults, 0, "sd3");
  absl::StatusOr<io::TensorMap> weights = io::ReadAllTensors(
      dir + "/transformer/diffusion_pytorch_model.safetensors");
  ASSERT_TRUE(weights.ok()) << weights.status();
  const at::Tensor table = weights->at("pos_embed.pos_embed");
  // [1, 64 * 64 positions, inner dim 64]; position 0 encodes row and column
  // 0: sin 0 = 0 for the first quarter of each half, cos 0 = 1 after it.
  ASSERT_EQ(table.sizes(), (at::IntArrayRef{1, 64 * 64, 64}));
  EXPECT_TRUE(table[0][0].slice(0, 0, 16).eq(0).all().item<bool>());
  EXPECT_TRUE(table[0][0].slice(0, 16, 32).eq(1).all().item<bool>());
}

TEST_F(CfgCheckpointsTest, SameSeedGivesIdenticalWeights) {
  for (const config::ModelDefaults& model :
       {families::kPixArtSigmaDefaults, families::kSD3MediumDefaults}) {
    const std::string name(model.name);
    const std::string a = WriteTiny(model, 3, name + "_a");
    const std::string b = WriteTiny(model, 3, name + "_b");
    for (const char* file : {"/transformer/diffusion_pytorch_model.safetensors",
                             "/vae/diffusion_pytorch_model.safetensors",
                             "/text_encoder/model.safetensors"}) {
      EXPECT_TRUE(Bytes(a + file) == Bytes(b + file)) << name << file;
    }
  }
}

TEST_F(CfgCheckpointsTest, NonPixArtFamilyIsRejectedByThePixArtWriter) {
  const absl::Status status = WritePixArtCheckpoint(
      families::kSD3MediumDefaults, CheckpointPreset::kTiny, 0, root_.string());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("sd3-medium is not a PixArt"));
}

TEST_F(CfgCheckpointsTest, CachedCheckpointIsWrittenOnceAndNamedByItsInputs) {
  absl::StatusOr<std::string> first =
      engine::CachedCheckpoint(families::kPixArtSigmaDefaults.name,
                               CheckpointPreset::kTiny, 5, root_.string());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(std::filesystem::path(*first).filename(),
            "pixart-sigma-tiny-seed5-v1");
  const auto written =
      std::filesystem::last_write_time(*first + "/model_index.json");
  absl::StatusOr<std::string> second =
      engine::CachedCheckpoint(families::kPixArtSigmaDefaults.name,
                               CheckpointPreset::kTiny, 5, root_.string());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, *first);
  EXPECT_EQ(std::filesystem::last_write_time(*second + "/model_index.json"),
            written);
  // Nothing is left beside it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(root_),
                          std::filesystem::directory_iterator()),
            1);
}

}  // namespace
}  // namespace ditserve::checkpoints
