#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "core/base/json.h"
#include "core/families/cogvideox/cogvideox_positions.h"
#include "core/families/cogvideox/cogvideox_transformer_3d_model.h"
#include "core/parallel/local_attention.h"
#include "nlohmann/json.hpp"
#include "tests/unit/models/golden_case.h"

namespace ditserve::families {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::InDType;
using ::testing::HasSubstr;

std::shared_ptr<CogVideoXTransformer3DModel> LoadGoldenModel(
    const GoldenCase& golden,
    std::optional<models::BlockRange> blocks = std::nullopt) {
  absl::StatusOr<std::shared_ptr<CogVideoXTransformer3DModel>> model =
      LoadCogVideoXTransformer3DModel(
          golden.dir(), std::make_shared<parallel::LocalAttention>(),
          models::Placement{}, blocks);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

CogVideoXTransformerInputs GoldenInputs(const GoldenCase& golden) {
  return {.hidden_states = golden.Input("hidden_states"),
          .encoder_hidden_states = golden.Input("encoder_hidden_states"),
          .timestep = golden.Input("timestep")};
}

class CogVideoXGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CogVideoXGoldenTest, SampleMatchesDiffusers) {
  const GoldenCase golden("models/" + GetParam());
  std::shared_ptr<CogVideoXTransformer3DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample = model->Forward(GoldenInputs(golden));
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_TRUE(AllClose(*sample, golden.Output("sample"),
                       golden.ToleranceFor("sample")));
}

TEST_P(CogVideoXGoldenTest, SampleInBfloat16IsWithinTheDerivedTolerance) {
  const GoldenCase golden("models/" + GetParam());
  absl::StatusOr<std::shared_ptr<CogVideoXTransformer3DModel>> model =
      LoadCogVideoXTransformer3DModel(
          golden.dir(), std::make_shared<parallel::LocalAttention>(),
          models::Placement{.dtype = at::kBFloat16}, std::nullopt);
  ASSERT_TRUE(model.ok()) << model.status();
  CogVideoXTransformerInputs inputs = GoldenInputs(golden);
  inputs.hidden_states = InDType(inputs.hidden_states, at::kBFloat16);
  inputs.encoder_hidden_states =
      InDType(inputs.encoder_hidden_states, at::kBFloat16);
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample = (*model)->Forward(inputs);
  ASSERT_TRUE(sample.ok()) << sample.status();
  golden.ExpectBfloat16Close(*sample, "sample");
}

INSTANTIATE_TEST_SUITE_P(SincosRopeAndTemporalPatches, CogVideoXGoldenTest,
                         ::testing::Values("cogvideox_2b", "cogvideox_5b",
                                           "cogvideox15"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(CogVideoXTransformerTest, RotaryTablesAreThePipelines) {
  for (const char* name : {"cogvideox_5b", "cogvideox15"}) {
    const GoldenCase golden(std::string("models/") + name);
    std::shared_ptr<CogVideoXTransformer3DModel> model =
        LoadGoldenModel(golden);
    ASSERT_NE(model, nullptr);
    const at::Tensor latents = golden.Input("hidden_states");
    absl::StatusOr<VideoTokenGrid> grid = TokenGridOf(
        model->config(), latents.size(1), latents.size(3), latents.size(4));
    ASSERT_TRUE(grid.ok()) << grid.status();
    absl::StatusOr<VideoPositions> positions =
        model->PositionsOn(*grid, at::kCPU);
    ASSERT_TRUE(positions.ok() && positions->rotary.has_value()) << name;
    EXPECT_FALSE(positions->sincos.defined()) << name;
    EXPECT_TRUE(AllClose(positions->rotary->cos,
                         golden.Input("image_rotary_emb_cos"), {.atol = 1e-6}))
        << name;
    EXPECT_TRUE(AllClose(positions->rotary->sin,
                         golden.Input("image_rotary_emb_sin"), {.atol = 1e-6}))
        << name;
  }
}

// A video's forwards share their positions: asked again for the grid and
// device of the last call, the model gives the same tensors rather than
// making (and, on a GPU, copying) them again.
TEST_P(CogVideoXGoldenTest, PositionsAreMadeOncePerGrid) {
  const GoldenCase golden("models/" + GetParam());
  std::shared_ptr<CogVideoXTransformer3DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  const VideoTokenGrid grid{.frames = 2, .height = 2, .width = 2};
  absl::StatusOr<VideoPositions> first = model->PositionsOn(grid, at::kCPU);
  absl::StatusOr<VideoPositions> again = model->PositionsOn(grid, at::kCPU);
  ASSERT_TRUE(first.ok() && again.ok());
  const at::Tensor& table =
      first->rotary.has_value() ? first->rotary->cos : first->sincos;
  const at::Tensor& same =
      again->rotary.has_value() ? again->rotary->cos : again->sincos;
  EXPECT_TRUE(table.is_same(same));
  EXPECT_EQ(table.size(0), grid.tokens());
}

// The kept positions follow the grid: after a forward over the golden video,
// one over a narrower video equals a fresh model's.
TEST_P(CogVideoXGoldenTest, AnotherGridGetsItsOwnPositions) {
  const GoldenCase golden("models/" + GetParam());
  std::shared_ptr<CogVideoXTransformer3DModel> model = LoadGoldenModel(golden);
  std::shared_ptr<CogVideoXTransformer3DModel> fresh = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  ASSERT_NE(fresh, nullptr);
  CogVideoXTransformerInputs narrow = GoldenInputs(golden);
  narrow.hidden_states =
      narrow.hidden_states.narrow(4, 0, model->config().patch_size);
  torch::NoGradGuard no_grad;
  ASSERT_TRUE(model->Forward(GoldenInputs(golden)).ok());
  absl::StatusOr<at::Tensor> after_another = model->Forward(narrow);
  absl::StatusOr<at::Tensor> alone = fresh->Forward(narrow);
  ASSERT_TRUE(after_another.ok()) << after_another.status();
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_TRUE(at::equal(*after_another, *alone));
}

CogVideoXTransformerConfig GoldenConfig(const std::string& name) {
  absl::StatusOr<CogVideoXTransformerConfig> config =
      ReadCogVideoXTransformerConfig(std::string(DITSERVE_TEST_DATA_DIR) +
                                     "/golden/models/" + name + "/config.json");
  EXPECT_TRUE(config.ok()) << config.status();
  return config.value_or(CogVideoXTransformerConfig{});
}

// A 2x3 grid on a 3x3 trained grid is resized to 2x3 and centred at
// crop_top = round(0.5), which Python rounds to 0 (std::round gives 1): the
// first row of patches sits at position 0, so its row part is cos 0 = 1.
TEST(CogVideoXPositionsTest, RopeCropRoundsHalfToEvenAsPython) {
  const CogVideoXTransformerConfig config = GoldenConfig("cogvideox_5b");
  ASSERT_EQ(config.rope_grid_height(), 3);
  absl::StatusOr<models::RotaryTables> tables = RotaryVideoPositions(
      config, VideoTokenGrid{.frames = 1, .height = 2, .width = 3});
  ASSERT_TRUE(tables.ok()) << tables.status();
  const int64_t t_part = config.attention_head_dim / 4;
  const int64_t h_part = config.attention_head_dim / 8 * 3;
  // Token (0, 0, 0): every row channel is cos 0.
  EXPECT_TRUE(tables->cos[0]
                  .slice(0, t_part, t_part + h_part)
                  .eq(1)
                  .all()
                  .item<bool>());
  // Token (0, 1, 0): row position 1 (linspace(0, 2 * 1 / 2, 2)).
  EXPECT_FLOAT_EQ(tables->cos[3][t_part].item<float>(), std::cos(1.0F));
}

TEST(CogVideoXPositionsTest, SliceGridMustFitTheTrainedSize) {
  const CogVideoXTransformerConfig config = GoldenConfig("cogvideox15");
  const int64_t base = config.rope_grid_height();
  absl::StatusOr<models::RotaryTables> tables = RotaryVideoPositions(
      config, VideoTokenGrid{.frames = 1, .height = base + 1, .width = 1});
  EXPECT_EQ(tables.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tables.status().message(), HasSubstr("trained RoPE grid"));
}

// The interpolation scales, which diffusers' config defaults, take those
// defaults: without spatial_interpolation_scale, the 2b table's columns and
// rows are divided by 1.875, as with the released configs.
TEST(CogVideoXPositionsTest, AMissingInterpolationScaleIsDiffusersDefault) {
  absl::StatusOr<nlohmann::json> json =
      base::ReadJsonObjectFile(std::string(DITSERVE_TEST_DATA_DIR) +
                               "/golden/models/cogvideox_2b/config.json");
  ASSERT_TRUE(json.ok()) << json.status();
  json->erase("spatial_interpolation_scale");
  json->erase("temporal_interpolation_scale");
  absl::StatusOr<CogVideoXTransformerConfig> config =
      ParseCogVideoXTransformerConfig(*json, "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->spatial_interpolation_scale, 1.875);
  EXPECT_EQ(config->temporal_interpolation_scale, 1.0);
}

// The 2b table's row is [t | column | row]: token (t 1, h 0, w 1) has
// temporal position 1, column 1 / 1.875 and row 0.
TEST(CogVideoXPositionsTest, SincosTableIsTimeThenColumnThenRow) {
  const CogVideoXTransformerConfig config = GoldenConfig("cogvideox_2b");
  const VideoTokenGrid grid{.frames = 2, .height = 2, .width = 2};
  const at::Tensor table = SincosVideoPositions(config, grid);
  const int64_t dim = config.inner_dim();
  ASSERT_EQ(table.sizes(), (at::IntArrayRef{grid.tokens(), dim}));
  const at::Tensor row = table[1 * 4 + 0 * 2 + 1];
  // The first sin channel of each part: frequency 1.
  EXPECT_FLOAT_EQ(row[0].item<float>(), std::sin(1.0F));
  EXPECT_FLOAT_EQ(row[dim / 4].item<float>(),
                  static_cast<float>(std::sin(1.0F / 1.875F)));
  EXPECT_FLOAT_EQ(row[dim / 4 + dim / 8 * 3].item<float>(), 0.0F);
}

TEST(CogVideoXTransformerTest, OddLatentFramesOfA15ModelNameTheRule) {
  const GoldenCase golden("models/cogvideox15");
  std::shared_ptr<CogVideoXTransformer3DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  CogVideoXTransformerInputs inputs = GoldenInputs(golden);
  inputs.hidden_states = inputs.hidden_states.slice(1, 0, 3);
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(),
              HasSubstr("3 latent frames; it needs a positive multiple of "
                        "patch_size_t 2"));
}

TEST(CogVideoXTransformerTest, SincosModelNeedsItsTrainedTextLength) {
  const GoldenCase golden("models/cogvideox_2b");
  std::shared_ptr<CogVideoXTransformer3DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  CogVideoXTransformerInputs inputs = GoldenInputs(golden);
  inputs.encoder_hidden_states = inputs.encoder_hidden_states.slice(1, 0, 5);
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(),
              HasSubstr("encoder_hidden_states has shape [2, 5, 32]; "
                        "expected [2, 8, 32]"));
}

TEST(CogVideoXTransformerTest, AStageCannotRunTheWholeModel) {
  const GoldenCase golden("models/cogvideox_5b");
  std::shared_ptr<CogVideoXTransformer3DModel> model =
      LoadGoldenModel(golden, models::BlockRange{0, 1});
  ASSERT_NE(model, nullptr);
  EXPECT_FALSE(model->named_parameters().contains(
      "transformer_blocks.1.norm1.linear.weight"));
  EXPECT_EQ(model->Forward(GoldenInputs(golden)).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// The golden model as two PipeFusion stages of one block each.
std::pair<std::shared_ptr<CogVideoXTransformer3DModel>,
          std::shared_ptr<CogVideoXTransformer3DModel>>
TwoStages(const GoldenCase& golden) {
  return {LoadGoldenModel(golden, models::BlockRange{0, 1}),
          LoadGoldenModel(golden, models::BlockRange{1, 2})};
}

// Two stages of one block each over the whole sequence are the model: the
// second continues from the first's text and video streams, and only it
// projects the output.
TEST_P(CogVideoXGoldenTest, TwoStagesOverTheWholeSequenceAreTheModel) {
  const GoldenCase golden("models/" + GetParam());
  auto [first, second] = TwoStages(golden);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  const CogVideoXTransformerInputs inputs = GoldenInputs(golden);
  const at::Tensor& latents = inputs.hidden_states;
  absl::StatusOr<VideoTokenGrid> grid = TokenGridOf(
      first->config(), latents.size(1), latents.size(3), latents.size(4));
  ASSERT_TRUE(grid.ok()) << grid.status();
  const models::TokenSpan whole{0, grid->tokens()};
  torch::NoGradGuard no_grad;
  absl::StatusOr<CogVideoXStreams> streams =
      first->ForwardStage(inputs, whole, /*with_text=*/true, std::nullopt);
  ASSERT_TRUE(streams.ok()) << streams.status();
  EXPECT_EQ(first->StageOutput(inputs, streams->video).status().code(),
            absl::StatusCode::kFailedPrecondition);
  streams = second->ForwardStage(inputs, whole, /*with_text=*/true, *streams);
  ASSERT_TRUE(streams.ok()) << streams.status();
  absl::StatusOr<at::Tensor> tokens =
      second->StageOutput(inputs, streams->video);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_TRUE(AllClose(second->Unpatchify(*tokens, *grid),
                       golden.Output("sample"), golden.ToleranceFor("sample")));
}

TEST(CogVideoXTransformerTest, StagesRefuseMisplacedPatchesAndStreams) {
  const GoldenCase golden("models/cogvideox_5b");
  auto [first, second] = TwoStages(golden);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  const CogVideoXTransformerInputs inputs = GoldenInputs(golden);
  // 3 frames of 2 x 2 patches: 12 video tokens.
  EXPECT_EQ(
      first->ForwardStage(inputs, {10, 4}, /*with_text=*/true, std::nullopt)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  absl::StatusOr<CogVideoXStreams> streams =
      first->ForwardStage(inputs, {0, 6}, /*with_text=*/true, std::nullopt);
  ASSERT_TRUE(streams.ok()) << streams.status();
  EXPECT_EQ(first->ForwardStage(inputs, {0, 6}, /*with_text=*/true, *streams)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      second->ForwardStage(inputs, {0, 6}, /*with_text=*/true, std::nullopt)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  absl::StatusOr<CogVideoXStreams> wrong =
      second->ForwardStage(inputs, {0, 4}, /*with_text=*/true, *streams);
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong.status().message(), HasSubstr("incoming video stream"));
}

nlohmann::json GoldenConfigJson() {
  absl::StatusOr<nlohmann::json> json =
      base::ReadJsonFile(std::string(DITSERVE_TEST_DATA_DIR) +
                         "/golden/models/cogvideox_5b/config.json");
  EXPECT_TRUE(json.ok()) << json.status();
  return json.value_or(nlohmann::json::object());
}

TEST(CogVideoXTransformerConfigTest, ImageToVideoAndUnknownSettingsNameTheKey) {
  struct Case {
    const char* key;
    nlohmann::json value;
    const char* message;
  };
  for (const Case& bad : {
           Case{"use_learned_positional_embeddings", true,
                "use_learned_positional_embeddings is true"},
           Case{"ofs_embed_dim", 512, "ofs_embed_dim is 512"},
           Case{"activation_fn", "gelu", "activation_fn is \"gelu\""},
           Case{"num_layers", nullptr, "num_layers"},
       }) {
    nlohmann::json json = GoldenConfigJson();
    json[bad.key] = bad.value;
    absl::StatusOr<CogVideoXTransformerConfig> config =
        ParseCogVideoXTransformerConfig(json, "transformer/config.json");
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument)
        << bad.key;
    EXPECT_THAT(config.status().message(), HasSubstr(bad.message)) << bad.key;
    EXPECT_THAT(config.status().message(),
                HasSubstr("transformer/config.json"));
  }
}

TEST(CogVideoXTransformerConfigTest, VersionsDifferInPatchesAndPositions) {
  const CogVideoXTransformerConfig v2b = GoldenConfig("cogvideox_2b");
  const CogVideoXTransformerConfig v15 = GoldenConfig("cogvideox15");
  EXPECT_FALSE(v2b.use_rotary_positional_embeddings);
  EXPECT_EQ(v2b.temporal_patch(), 1);
  EXPECT_EQ(v2b.token_output_channels(), 2 * 2 * 16);
  EXPECT_TRUE(v15.use_rotary_positional_embeddings);
  EXPECT_EQ(v15.temporal_patch(), 2);
  EXPECT_FALSE(v15.patch_bias);
  EXPECT_EQ(v15.token_output_channels(), 2 * 2 * 2 * 16);
}

}  // namespace
}  // namespace ditserve::families
