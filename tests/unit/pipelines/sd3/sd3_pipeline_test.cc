#include "core/pipelines/sd3/sd3_pipeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/parallel/local_attention.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::pipelines {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::Uint8Close;
using ::testing::HasSubstr;

class SD3PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    golden_ = std::make_unique<GoldenCase>("pipelines/sd3");
    absl::StatusOr<std::unique_ptr<SD3Pipeline>> pipeline = SD3Pipeline::Load(
        golden_->dir(), std::make_shared<parallel::LocalAttention>(),
        models::Placement{});
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    pipeline_ = *std::move(pipeline);
  }

  SD3Request Request() const {
    const nlohmann::json& json = golden_->json();
    SD3Request request;
    request.prompt_embeds = golden_->Input("prompt_embeds");
    request.pooled_prompt_embeds = golden_->Input("pooled_prompt_embeds");
    request.negative_prompt_embeds = golden_->Input("negative_prompt_embeds");
    request.negative_pooled_prompt_embeds =
        golden_->Input("negative_pooled_prompt_embeds");
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
  std::unique_ptr<SD3Pipeline> pipeline_;
};

TEST_F(SD3PipelineTest, SeededNoiseIsTheGoldenLatents) {
  absl::StatusOr<at::Tensor> latents = pipeline_->InitialLatents(Request());
  ASSERT_TRUE(latents.ok()) << latents.status();
  EXPECT_TRUE(torch::equal(*latents, golden_->Input("latents")));
}

TEST_F(SD3PipelineTest, ScheduleMatchesThePipeline) {
  const SD3Request request = Request();
  absl::StatusOr<schedulers::FlowMatchEulerDiscreteScheduler> schedule =
      pipeline_->Schedule(request.height, request.width,
                          request.num_inference_steps);
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ExpectClose(schedule->timesteps(), "timesteps");
  ExpectClose(schedule->sigmas(), "sigmas");
}

TEST_F(SD3PipelineTest, EveryStepAndTheImageMatchDiffusers) {
  std::vector<SD3StepEvent> events;
  absl::StatusOr<at::Tensor> latents =
      pipeline_->Denoise(Request(), golden_->Input("latents"),
                         [&events](const SD3StepEvent& event) {
                           events.push_back(event);
                           return absl::OkStatus();
                         });
  ASSERT_TRUE(latents.ok()) << latents.status();
  ASSERT_EQ(events.size(), 4U);
  for (const SD3StepEvent& event : events) {
    EXPECT_EQ(event.num_steps, 4);
    ExpectClose(event.noise_pred,
                absl::StrCat("step.", event.step, ".noise_pred"));
    ExpectClose(event.latents, absl::StrCat("step.", event.step, ".latents"));
  }
  ExpectClose(*latents, "latents_final");

  absl::StatusOr<SD3DecodeOutput> decoded = pipeline_->Decode(*latents);
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

TEST_F(SD3PipelineTest, GenerateEqualsTheStagesRunInOrder) {
  absl::StatusOr<SD3DecodeOutput> generated =
      pipeline_->Generate(Request(), nullptr);
  ASSERT_TRUE(generated.ok()) << generated.status();
  ExpectClose(generated->images.image, "image");
}

TEST_F(SD3PipelineTest, EachImageOfABatchOfThreeEqualsItsSingleImage) {
  const SD3Request golden = Request();
  torch::manual_seed(0);
  SD3Request batch = golden;
  batch.prompt_embeds =
      torch::cat({golden.prompt_embeds, torch::randn({2, 8, 32})}, /*dim=*/0);
  batch.pooled_prompt_embeds = torch::cat(
      {golden.pooled_prompt_embeds, torch::randn({2, 64})}, /*dim=*/0);
  batch.negative_prompt_embeds =
      golden.negative_prompt_embeds.expand({3, -1, -1}).contiguous();
  batch.negative_pooled_prompt_embeds =
      golden.negative_pooled_prompt_embeds.expand({3, -1}).contiguous();
  batch.seeds = {42, 43, 44};
  absl::StatusOr<SD3DecodeOutput> together =
      pipeline_->Generate(batch, nullptr);
  ASSERT_TRUE(together.ok()) << together.status();

  for (int64_t image = 0; image < 3; ++image) {
    SD3Request single = golden;
    single.prompt_embeds = batch.prompt_embeds.slice(0, image, image + 1);
    single.pooled_prompt_embeds =
        batch.pooled_prompt_embeds.slice(0, image, image + 1);
    single.seeds = {batch.seeds[image]};
    absl::StatusOr<SD3DecodeOutput> alone =
        pipeline_->Generate(single, nullptr);
    ASSERT_TRUE(alone.ok()) << alone.status();
    EXPECT_TRUE(AllClose(together->images.image.slice(0, image, image + 1),
                         alone->images.image, {1e-5, 1e-5}))
        << "image " << image;
  }
}

TEST_F(SD3PipelineTest, ObserverErrorStopsTheLoopAfterThatStep) {
  int calls = 0;
  absl::StatusOr<SD3DecodeOutput> result =
      pipeline_->Generate(Request(), [&calls](const SD3StepEvent& event) {
        ++calls;
        return event.step == 1 ? absl::CancelledError("client cancelled")
                               : absl::OkStatus();
      });
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(calls, 2);
}

TEST_F(SD3PipelineTest, GuidanceWithoutNegativePooledEmbedsIsAnError) {
  SD3Request request = Request();
  request.negative_pooled_prompt_embeds = at::Tensor();
  absl::StatusOr<SD3DecodeOutput> result =
      pipeline_->Generate(request, nullptr);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              HasSubstr("negative_pooled_prompt_embeds"));
}

TEST_F(SD3PipelineTest, GuidanceOfOneRunsTheModelOnThePromptAlone) {
  SD3Request request = Request();
  request.guidance_scale = 1.0F;
  request.negative_prompt_embeds = at::Tensor();
  request.negative_pooled_prompt_embeds = at::Tensor();
  int64_t model_batch = 0;
  absl::StatusOr<SD3DecodeOutput> result =
      pipeline_->Generate(request, [&model_batch](const SD3StepEvent& event) {
        model_batch = event.noise_pred.size(0);
        return absl::OkStatus();
      });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(model_batch, 1);
}

// An exchange that hands this rank's output back as both branches reduces
// guidance to that branch alone: the split must run exactly the branch it
// names, once per step on the unbatched latents.
TEST_F(SD3PipelineTest, CfgSplitRunsTheTransformerOnItsOwnBranchOnly) {
  const SD3Request guided = Request();
  ASSERT_FALSE(
      torch::equal(guided.negative_prompt_embeds, guided.prompt_embeds));
  for (const int branch : {kNegativeBranch, kPositiveBranch}) {
    SD3Request split = guided;
    std::vector<int64_t> exchanged_rows;
    split.cfg_split = CfgSplit{
        branch,
        [&exchanged_rows](const at::Tensor& own) -> absl::StatusOr<at::Tensor> {
          exchanged_rows.push_back(own.size(0));
          return at::cat({own, own});
        }};
    SD3Request branch_alone = guided;
    branch_alone.guidance_scale = 1.0F;
    if (branch == kNegativeBranch) {
      branch_alone.prompt_embeds = guided.negative_prompt_embeds;
      branch_alone.pooled_prompt_embeds = guided.negative_pooled_prompt_embeds;
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

TEST_F(SD3PipelineTest, CfgSplitExchangeErrorStopsTheLoop) {
  SD3Request request = Request();
  request.cfg_split = CfgSplit{
      kNegativeBranch, [](const at::Tensor&) -> absl::StatusOr<at::Tensor> {
        return absl::DeadlineExceededError("cfg peer silent");
      }};
  absl::StatusOr<at::Tensor> latents =
      pipeline_->Denoise(request, golden_->Input("latents"), nullptr);
  EXPECT_EQ(latents.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(latents.status().message(), HasSubstr("cfg peer silent"));
}

}  // namespace
}  // namespace ditserve::pipelines
