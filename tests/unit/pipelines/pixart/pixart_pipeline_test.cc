#include "core/pipelines/pixart/pixart_pipeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/parallel/local_attention.h"
#include "core/pipelines/initial_noise.h"
#include "core/schedulers/dpm_solver_multistep.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::pipelines {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::Uint8Close;
using ::testing::HasSubstr;

class PixArtPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    golden_ = std::make_unique<GoldenCase>("pipelines/pixart_sigma");
    absl::StatusOr<std::unique_ptr<PixArtPipeline>> pipeline =
        PixArtPipeline::Load(golden_->dir(),
                             std::make_shared<parallel::LocalAttention>(),
                             models::Placement{});
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    pipeline_ = *std::move(pipeline);
  }

  PixArtRequest Request() const {
    const nlohmann::json& json = golden_->json();
    PixArtRequest request;
    request.prompt_embeds = golden_->Input("prompt_embeds");
    request.prompt_attention_mask = golden_->Input("prompt_attention_mask");
    request.negative_prompt_embeds = golden_->Input("negative_prompt_embeds");
    request.negative_prompt_attention_mask =
        golden_->Input("negative_prompt_attention_mask");
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
  std::unique_ptr<PixArtPipeline> pipeline_;
};

TEST_F(PixArtPipelineTest, SeededNoiseIsTheGoldenLatents) {
  absl::StatusOr<at::Tensor> latents = pipeline_->InitialLatents(Request());
  ASSERT_TRUE(latents.ok()) << latents.status();
  EXPECT_TRUE(torch::equal(*latents, golden_->Input("latents")));
}

TEST_F(PixArtPipelineTest, ScheduleMatchesThePipeline) {
  absl::StatusOr<std::unique_ptr<schedulers::Scheduler>> schedule =
      pipeline_->Schedule(Request().num_inference_steps);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ExpectClose((*schedule)->timesteps(), "timesteps");
  const auto* dpm =
      dynamic_cast<const schedulers::DPMSolverMultistepScheduler*>(
          schedule->get());
  ASSERT_NE(dpm, nullptr) << (*schedule)->class_name();
  ExpectClose(dpm->sigmas(), "sigmas");
}

TEST_F(PixArtPipelineTest, EveryStepAndTheImageMatchDiffusers) {
  std::vector<PixArtStepEvent> events;
  const PixArtRequest request = Request();
  absl::StatusOr<at::Tensor> latents =
      pipeline_->Denoise(request, golden_->Input("latents"),
                         [&events](const PixArtStepEvent& event) {
                           events.push_back(event);
                           return absl::OkStatus();
                         });
  ASSERT_TRUE(latents.ok()) << latents.status();
  ASSERT_EQ(events.size(), 4U);
  for (const PixArtStepEvent& event : events) {
    EXPECT_EQ(event.num_steps, 4);
    ExpectClose(event.noise_pred,
                absl::StrCat("step.", event.step, ".noise_pred"));
    ExpectClose(event.latents, absl::StrCat("step.", event.step, ".latents"));
  }
  ExpectClose(*latents, "latents_final");

  absl::StatusOr<PixArtDecodeOutput> decoded = pipeline_->Decode(*latents);
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

TEST_F(PixArtPipelineTest, GenerateEqualsTheStagesRunInOrder) {
  absl::StatusOr<PixArtDecodeOutput> generated =
      pipeline_->Generate(Request(), nullptr);
  ASSERT_TRUE(generated.ok()) << generated.status();
  ExpectClose(generated->images.image, "image");
}

TEST_F(PixArtPipelineTest, EachImageOfABatchOfThreeEqualsItsSingleImage) {
  const PixArtRequest golden = Request();
  torch::manual_seed(0);
  PixArtRequest batch = golden;
  batch.prompt_embeds =
      torch::cat({golden.prompt_embeds, torch::randn({2, 8, 32})}, /*dim=*/0);
  batch.prompt_attention_mask = torch::cat(
      {golden.prompt_attention_mask,
       torch::tensor({1, 1, 1, 0, 0, 0, 0, 0}, torch::kLong).unsqueeze(0),
       torch::ones({1, 8}, torch::kLong)},
      /*dim=*/0);
  batch.negative_prompt_embeds =
      golden.negative_prompt_embeds.expand({3, -1, -1}).contiguous();
  batch.negative_prompt_attention_mask =
      golden.negative_prompt_attention_mask.expand({3, -1}).contiguous();
  batch.seeds = {42, 43, 44};
  absl::StatusOr<PixArtDecodeOutput> together =
      pipeline_->Generate(batch, nullptr);
  ASSERT_TRUE(together.ok()) << together.status();

  for (int64_t image = 0; image < 3; ++image) {
    PixArtRequest single = batch;
    single.prompt_embeds = batch.prompt_embeds.slice(0, image, image + 1);
    single.prompt_attention_mask =
        batch.prompt_attention_mask.slice(0, image, image + 1);
    single.negative_prompt_embeds = golden.negative_prompt_embeds;
    single.negative_prompt_attention_mask =
        golden.negative_prompt_attention_mask;
    single.seeds = {batch.seeds[image]};
    absl::StatusOr<PixArtDecodeOutput> alone =
        pipeline_->Generate(single, nullptr);
    ASSERT_TRUE(alone.ok()) << alone.status();
    EXPECT_TRUE(AllClose(together->images.image.slice(0, image, image + 1),
                         alone->images.image, {1e-5, 1e-5}))
        << "image " << image;
  }
}

TEST_F(PixArtPipelineTest, OutputSizeResizesAndCropsTheDecodedImage) {
  PixArtRequest request = Request();
  request.output_size = config::ImageSize{40, 24};
  absl::StatusOr<PixArtDecodeOutput> generated =
      pipeline_->Generate(request, nullptr);
  ASSERT_TRUE(generated.ok()) << generated.status();
  EXPECT_EQ(generated->images.rgb.sizes(),
            (std::vector<int64_t>{1, 40, 24, 3}));
  const DecodedImages expected = PostprocessDecoded(
      ResizeAndCenterCrop(golden_->Output("image_raw"), {40, 24}));
  EXPECT_TRUE(AllClose(generated->images.image, expected.image, {1e-4, 1e-5}));
}

TEST_F(PixArtPipelineTest, ObserverErrorStopsTheLoopAfterThatStep) {
  int calls = 0;
  absl::StatusOr<PixArtDecodeOutput> result =
      pipeline_->Generate(Request(), [&calls](const PixArtStepEvent& event) {
        ++calls;
        return event.step == 1 ? absl::CancelledError("client cancelled")
                               : absl::OkStatus();
      });
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(calls, 2);
}

TEST_F(PixArtPipelineTest, GuidanceWithoutNegativePromptIsAnError) {
  PixArtRequest request = Request();
  request.negative_prompt_embeds = at::Tensor();
  absl::StatusOr<PixArtDecodeOutput> result =
      pipeline_->Generate(request, nullptr);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("negative_prompt_embeds"));
}

TEST_F(PixArtPipelineTest, ImageSizeOffTheLatentGridNamesTheMultiple) {
  PixArtRequest request = Request();
  request.height = 36;
  absl::StatusOr<at::Tensor> latents = pipeline_->InitialLatents(request);
  EXPECT_EQ(latents.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(latents.status().message(),
              HasSubstr("image size 36x32 must be positive multiples of 8 "
                        "(VAE scale 4 x patch 2)"));
}

// An exchange that hands this rank's output back as both branches reduces
// guidance to that branch alone: the split must run exactly the branch it
// names, once per step on the unbatched latents.
TEST_F(PixArtPipelineTest, CfgSplitRunsTheTransformerOnItsOwnBranchOnly) {
  const PixArtRequest guided = Request();
  ASSERT_FALSE(
      torch::equal(guided.negative_prompt_embeds, guided.prompt_embeds));
  for (const int branch : {kNegativeBranch, kPositiveBranch}) {
    PixArtRequest split = guided;
    std::vector<int64_t> exchanged_rows;
    split.cfg_split = CfgSplit{
        branch,
        [&exchanged_rows](const at::Tensor& own) -> absl::StatusOr<at::Tensor> {
          exchanged_rows.push_back(own.size(0));
          return at::cat({own, own});
        }};
    PixArtRequest branch_alone = guided;
    branch_alone.guidance_scale = 1.0F;
    if (branch == kNegativeBranch) {
      branch_alone.prompt_embeds = guided.negative_prompt_embeds;
      branch_alone.prompt_attention_mask =
          guided.negative_prompt_attention_mask;
    }
    absl::StatusOr<at::Tensor> from_split =
        pipeline_->Denoise(split, golden_->Input("latents"), nullptr);
    absl::StatusOr<at::Tensor> from_branch =
        pipeline_->Denoise(branch_alone, golden_->Input("latents"), nullptr);
    ASSERT_TRUE(from_split.ok()) << from_split.status();
    ASSERT_TRUE(from_branch.ok()) << from_branch.status();
    EXPECT_TRUE(torch::equal(*from_split, *from_branch)) << branch;
    EXPECT_EQ(exchanged_rows,
              std::vector<int64_t>(guided.num_inference_steps, 1));
  }
}

TEST_F(PixArtPipelineTest, CfgSplitExchangeOfTheWrongSizeIsAnError) {
  PixArtRequest request = Request();
  request.cfg_split = CfgSplit{
      kPositiveBranch,
      [](const at::Tensor& own) -> absl::StatusOr<at::Tensor> { return own; }};
  absl::StatusOr<at::Tensor> latents =
      pipeline_->Denoise(request, golden_->Input("latents"), nullptr);
  EXPECT_EQ(latents.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(latents.status().message(),
              HasSubstr("exchanged guidance branches has shape [1, 8"));
}

TEST_F(PixArtPipelineTest, CfgSplitWithoutGuidanceIsAnError) {
  PixArtRequest request = Request();
  request.guidance_scale = 1.0F;
  request.cfg_split = CfgSplit{
      kNegativeBranch,
      [](const at::Tensor& own) -> absl::StatusOr<at::Tensor> { return own; }};
  absl::StatusOr<at::Tensor> latents = pipeline_->InitialLatents(request);
  EXPECT_EQ(latents.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(latents.status().message(),
              HasSubstr("cfg_split needs classifier-free guidance"));
}

}  // namespace
}  // namespace ditserve::pipelines
