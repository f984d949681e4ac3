#include "core/pipelines/flux/flux_pipeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/parallel/local_attention.h"
#include "core/pipelines/initial_noise.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::pipelines {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::Uint8Close;
using ::testing::HasSubstr;

// Loads a golden pipeline case and its FluxPipeline.
class FluxGoldenFixture : public ::testing::Test {
 protected:
  void LoadCase(const std::string& name) {
    golden_ = std::make_unique<GoldenCase>("pipelines/" + name);
    absl::StatusOr<std::unique_ptr<FluxPipeline>> pipeline = FluxPipeline::Load(
        golden_->dir(), std::make_shared<parallel::LocalAttention>(),
        models::Placement{});
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    pipeline_ = *std::move(pipeline);
  }

  FluxRequest Request() const {
    const nlohmann::json& json = golden_->json();
    FluxRequest request;
    request.prompt_embeds = golden_->Input("prompt_embeds");
    request.pooled_prompt_embeds = golden_->Input("pooled_prompt_embeds");
    request.height = json.at("height").get<int64_t>();
    request.width = json.at("width").get<int64_t>();
    request.num_inference_steps = json.at("num_inference_steps").get<int>();
    request.guidance_scale = json.at("guidance_scale").get<float>();
    request.seeds = {json.at("generator_seed").get<uint64_t>()};
    return request;
  }

  void ExpectClose(const at::Tensor& actual, const std::string& output) {
    EXPECT_TRUE(AllClose(actual, golden_->Output(output),
                         golden_->ToleranceFor(output)))
        << output;
  }

  std::unique_ptr<GoldenCase> golden_;
  std::unique_ptr<FluxPipeline> pipeline_;
};

class FluxPipelineGoldenTest
    : public FluxGoldenFixture,
      public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { LoadCase(GetParam()); }
};

TEST_P(FluxPipelineGoldenTest, SeededNoiseIsTheGoldenLatents) {
  const at::Tensor unpacked = golden_->Input("latents_unpacked");
  EXPECT_TRUE(torch::equal(
      InitialNoise(golden_->json().at("generator_seed").get<uint64_t>(),
                   unpacked.sizes()),
      unpacked));
  absl::StatusOr<at::Tensor> latents = pipeline_->InitialLatents(Request());
  ASSERT_TRUE(latents.ok()) << latents.status();
  EXPECT_TRUE(torch::equal(*latents, golden_->Input("latents")));
}

TEST_P(FluxPipelineGoldenTest, ScheduleMatchesThePipeline) {
  const FluxRequest request = Request();
  absl::StatusOr<schedulers::FlowMatchEulerDiscreteScheduler> schedule =
      pipeline_->Schedule(request.height, request.width,
                          request.num_inference_steps);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ExpectClose(schedule->timesteps(), "timesteps");
  ExpectClose(schedule->sigmas(), "sigmas");
}

TEST_P(FluxPipelineGoldenTest, EveryStepAndTheImageMatchDiffusers) {
  std::vector<FluxStepEvent> events;
  const FluxRequest request = Request();
  absl::StatusOr<at::Tensor> initial = pipeline_->InitialLatents(request);
  ASSERT_TRUE(initial.ok()) << initial.status();
  absl::StatusOr<at::Tensor> latents = pipeline_->Denoise(
      request, *initial, [&events](const FluxStepEvent& event) {
        events.push_back(event);
        return absl::OkStatus();
      });
  ASSERT_TRUE(latents.ok()) << latents.status();
  ASSERT_EQ(events.size(), 4U);
  for (const FluxStepEvent& event : events) {
    EXPECT_EQ(event.num_steps, 4);
    ExpectClose(event.noise_pred,
                absl::StrCat("step.", event.step, ".noise_pred"));
    ExpectClose(event.latents, absl::StrCat("step.", event.step, ".latents"));
  }
  ExpectClose(*latents, "latents_final");

  absl::StatusOr<FluxDecodeOutput> decoded =
      pipeline_->Decode(*latents, request.height, request.width);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectClose(decoded->vae_input, "vae_input");
  ExpectClose(decoded->images.raw, "image_raw");
  ExpectClose(decoded->images.image, "image");
  const nlohmann::json& rule =
      golden_->json().at("tolerance").at("image_uint8");
  EXPECT_TRUE(Uint8Close(decoded->images.rgb, golden_->Output("image_uint8"),
                         rule.at("atol").get<int>(),
                         rule.at("max_fraction_differing").get<double>()));
}

TEST_P(FluxPipelineGoldenTest, GenerateEqualsTheStagesRunInOrder) {
  absl::StatusOr<FluxDecodeOutput> generated =
      pipeline_->Generate(Request(), nullptr);
  ASSERT_TRUE(generated.ok()) << generated.status();
  ExpectClose(generated->images.image, "image");
}

INSTANTIATE_TEST_SUITE_P(GoldenCases, FluxPipelineGoldenTest,
                         ::testing::Values("flux_dev", "flux_schnell"));

class FluxPipelineTest : public FluxGoldenFixture {
 protected:
  void SetUp() override { LoadCase("flux_schnell"); }
};

TEST_F(FluxPipelineTest, ObserverErrorStopsTheLoopAfterThatStep) {
  int calls = 0;
  absl::StatusOr<FluxDecodeOutput> result =
      pipeline_->Generate(Request(), [&calls](const FluxStepEvent& event) {
        ++calls;
        return event.step == 1 ? absl::CancelledError("client cancelled")
                               : absl::OkStatus();
      });
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(calls, 2);
}

TEST_F(FluxPipelineTest, SizeNotAMultipleOfThePackedVaeScaleIsRejected) {
  FluxRequest request = Request();
  request.height = 36;
  absl::StatusOr<FluxDecodeOutput> result = pipeline_->Generate(request, {});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              HasSubstr("height 36 is not a positive multiple of 8"));
}

TEST_F(FluxPipelineTest, EachImageDependsOnlyOnItsOwnSeed) {
  FluxRequest pair = Request();
  pair.prompt_embeds = pair.prompt_embeds.repeat({2, 1, 1});
  pair.pooled_prompt_embeds = pair.pooled_prompt_embeds.repeat({2, 1});
  pair.seeds = {7, pair.seeds[0]};
  absl::StatusOr<at::Tensor> latents = pipeline_->InitialLatents(pair);
  ASSERT_TRUE(latents.ok()) << latents.status();
  EXPECT_TRUE(torch::equal((*latents)[1], golden_->Input("latents")[0]));
  EXPECT_FALSE(torch::equal((*latents)[0], (*latents)[1]));
}

TEST_F(FluxPipelineTest, SeedCountMustMatchThePromptBatch) {
  FluxRequest request = Request();
  request.seeds = {1, 2};
  absl::StatusOr<at::Tensor> latents = pipeline_->InitialLatents(request);
  EXPECT_EQ(latents.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(latents.status().message(), HasSubstr("prompt_embeds has shape"));
}

}  // namespace
}  // namespace ditserve::pipelines
