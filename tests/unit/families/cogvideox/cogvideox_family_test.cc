#include "core/families/cogvideox/cogvideox_family.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/config/checkpoint_spec.h"
#include "core/config/field_error.h"
#include "core/config/freeze.h"
#include "core/config/parallel_config.h"
#include "core/config/server_options.h"
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

// `request` frozen for the golden pipeline folder `name` as the host
// freezes it under `options`, with the spec Detect reads from that folder.
absl::StatusOr<v1::InputConfig> FreezeFor(
    const std::string& name, const v1::GenerateRequest& request,
    const config::ServerOptions& options = {}) {
  const GoldenCase golden("pipelines/" + name);
  ASSIGN_OR_RETURN(const config::CheckpointConfigs configs,
                   config::ReadCheckpointConfigs(golden.dir()));
  ASSIGN_OR_RETURN(const config::ModelSpec spec,
                   CogVideoXFamily().Detect(configs));
  ASSIGN_OR_RETURN(const v1::ParallelConfig parallel,
                   config::MakeParallelConfig({}, 1));
  return config::Freeze(request, spec, options, parallel,
                        config::FreezeContext{});
}

// Freeze refuses `request` INVALID_ARGUMENT naming `field` alone, with
// `message` in its text.
void ExpectFreezeRefuses(const std::string& name,
                         const v1::GenerateRequest& request,
                         const std::string& field, const std::string& message,
                         const config::ServerOptions& options = {}) {
  const absl::StatusOr<v1::InputConfig> refused =
      FreezeFor(name, request, options);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr(message));
  EXPECT_THAT(config::ErrorFields(refused.status()),
              ::testing::ElementsAre(field));
}

v1::GenerateRequest OnePrompt() {
  v1::GenerateRequest request;
  request.add_prompt("a paper boat on a stream");
  return request;
}

// CogVideoXDDIMScheduler's trailing spacing gives 62 timesteps, the last
// -1, for 61 steps: Freeze refuses that count through the spec, naming the
// field and the nearest counts that work, before the request waits in the
// queue.
TEST(CogVideoXFamilyTest, StepCountsTheSchedulerRefusesAreRefusedAtFreeze) {
  v1::GenerateRequest request = OnePrompt();
  request.set_num_inference_steps(60);
  const absl::StatusOr<v1::InputConfig> taken =
      FreezeFor("cogvideox_5b", request);
  EXPECT_TRUE(taken.ok()) << taken.status();
  request.set_num_inference_steps(61);
  ExpectFreezeRefuses("cogvideox_5b", request, "num_inference_steps",
                      "num_inference_steps 61 with trailing timestep spacing "
                      "gives 62 timesteps, the last -1 (numpy's arange "
                      "rounding), outside 0..999; the nearest step counts "
                      "that work: 60 and 62");
}

// 121 and 122 of 1000 both fail; the nearest count above, 123, is past
// this server's --max_inference_steps, so the hint names only 120.
TEST(CogVideoXFamilyTest, TheNearestStepCountsNamedAreWithinTheServersLimit) {
  v1::GenerateRequest request = OnePrompt();
  request.set_num_inference_steps(121);
  config::ServerOptions options;
  ExpectFreezeRefuses("cogvideox_5b", request, "num_inference_steps",
                      "; the nearest step counts that work: 120 and 123",
                      options);
  options.max_inference_steps = 122;
  const absl::StatusOr<v1::InputConfig> refused =
      FreezeFor("cogvideox_5b", request, options);
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::EndsWith(
                  "outside 0..999; the nearest step counts that work: 120"));
}

// 1.5 cuts its RoPE grid from the trained one (sample_height and
// sample_width 12 latent pixels: 6 patches of 16 pixels), so Freeze refuses
// a side beyond 96 pixels naming it, where the run would fail later.
TEST(CogVideoXFamilyTest, SidesBeyondThe15PositionGridAreRefusedAtFreeze) {
  v1::GenerateRequest request = OnePrompt();
  request.set_height(96);
  request.set_width(96);
  const absl::StatusOr<v1::InputConfig> taken =
      FreezeFor("cogvideox15", request);
  EXPECT_TRUE(taken.ok()) << taken.status();
  request.set_width(112);
  ExpectFreezeRefuses("cogvideox15", request, "width",
                      "width 112 is out of range; allowed 16 to 96 pixels "
                      "(the most the model's positions cover)");
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
  for (const int64_t frames : {10, 5}) {
    request = Request(golden);
    request.frames = frames;
    EXPECT_THAT(
        model->CheckRequest(request).message(),
        HasSubstr(absl::StrCat("frames ", frames, " is not 8 × N + 1")));
  }
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
