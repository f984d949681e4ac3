#include "core/families/cogvideox/cogvideox_family.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/config/checkpoint_spec.h"
#include "core/families/cogvideox/cogvideox_defaults.h"
#include "core/parallel/local_attention.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::families {
namespace {

using ::ditserve::testing::GoldenCase;
using ::testing::HasSubstr;

std::unique_ptr<FamilyModel> LoadCase(const GoldenCase& golden) {
  LoadOptions options;
  options.attention = std::make_shared<parallel::LocalAttention>();
  options.prompt_encoders = false;
  absl::StatusOr<std::unique_ptr<FamilyModel>> model =
      CogVideoXFamily().Load(golden.dir(), options);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *std::move(model) : nullptr;
}

GenerationRequest Request(const GoldenCase& golden) {
  const nlohmann::json& json = golden.json();
  GenerationRequest request;
  request.prompt.states = golden.Input("prompt_embeds");
  request.negative_prompt.states = golden.Input("negative_prompt_embeds");
  request.height = json.at("height").get<int64_t>();
  request.width = json.at("width").get<int64_t>();
  request.frames = json.at("num_frames").get<int64_t>();
  request.num_inference_steps = json.at("num_inference_steps").get<int>();
  request.guidance_scale = json.at("guidance_scale").get<float>();
  request.seeds = {json.at("generator_seed").get<uint64_t>()};
  return request;
}

TEST(CogVideoXFamilyTest, DetectTellsTheReleasesApartByTheirTransformer) {
  for (const auto& [name, expected] :
       {std::pair<std::string, config::ModelDefaults>{"cogvideox_5b",
                                                      kCogVideoX5bDefaults},
        {"cogvideox15", kCogVideoX15Defaults}}) {
    const GoldenCase golden("pipelines/" + name);
    absl::StatusOr<config::CheckpointConfigs> configs =
        config::ReadCheckpointConfigs(golden.dir());
    ASSERT_TRUE(configs.ok()) << configs.status();
    absl::StatusOr<config::ModelSpec> spec = CogVideoXFamily().Detect(*configs);
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(spec->defaults.name, expected.name);
    EXPECT_EQ(spec->temporal_compression, 4);
    EXPECT_EQ(spec->temporal_patch, name == "cogvideox15" ? 2 : 1);
    EXPECT_EQ(spec->vae_scale_factor, 8);
  }
}

TEST(CogVideoXFamilyTest, PaddedLatentFramesComeFirstAndAreDroppedOnDecode) {
  const GoldenCase golden("pipelines/cogvideox15");
  std::unique_ptr<FamilyModel> model = LoadCase(golden);
  ASSERT_NE(model, nullptr);
  const GenerationRequest request = Request(golden);
  // 9 frames: 3 latent frames, padded to 4 for the temporal patch of 2.
  EXPECT_EQ(model->NoiseShape(request), (std::vector<int64_t>{1, 4, 16, 4, 6}));
  const at::Tensor latents = torch::randn({1, 4, 16, 4, 6});
  absl::StatusOr<DecodeOutput> decoded = model->Decode(
      latents, DecodeRequest{.height = 32, .width = 48, .frames = 9});
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_TRUE(torch::equal(decoded->vae_input,
                           latents.slice(1, 1).permute({0, 2, 1, 3, 4}) / 0.7));
  EXPECT_EQ(decoded->images.rgb.sizes(),
            (std::vector<int64_t>{1, 9, 32, 48, 3}));
}

TEST(CogVideoXFamilyTest, RequestsOffTheGridNameTheRule) {
  const GoldenCase golden("pipelines/cogvideox_5b");
  std::unique_ptr<FamilyModel> model = LoadCase(golden);
  ASSERT_NE(model, nullptr);
  GenerationRequest request = Request(golden);
  request.width = 40;
  EXPECT_THAT(model->CheckRequest(request).message(),
              HasSubstr("width 40 is not a positive multiple of 16"));
  request = Request(golden);
  request.frames = 10;
  EXPECT_THAT(model->CheckRequest(request).message(),
              HasSubstr("frames 10 is not 4 × N + 1"));
  request = Request(golden);
  request.prompt.states = torch::randn({1, 8, 24});
  EXPECT_EQ(model->CheckRequest(request).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CogVideoXFamilyTest, ASchedulerOfAnotherClassIsRefusedAtLoad) {
  const GoldenCase golden("pipelines/cogvideox_5b");
  const std::filesystem::path copy =
      std::filesystem::temp_directory_path() / "ditserve_cogvideox_scheduler";
  std::filesystem::remove_all(copy);
  std::filesystem::copy(golden.dir(), copy,
                        std::filesystem::copy_options::recursive);
  std::ofstream(copy / "scheduler" / "scheduler_config.json")
      << R"({"_class_name": "DDIMScheduler"})";
  LoadOptions options;
  options.attention = std::make_shared<parallel::LocalAttention>();
  options.prompt_encoders = false;
  absl::StatusOr<std::unique_ptr<FamilyModel>> model =
      CogVideoXFamily().Load(copy.string(), options);
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(),
              HasSubstr("expected CogVideoXDDIMScheduler or "
                        "CogVideoXDPMScheduler"));
  std::filesystem::remove_all(copy);
}

}  // namespace
}  // namespace ditserve::families
