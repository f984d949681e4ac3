// The one denoise loop on every registered family's golden pipeline case:
// seeded noise, schedule, every step and the decoded image against diffusers;
// batching, the step observer, and for the classifier-free-guidance families
// the guidance batch and the CFG split.

#include "core/engine/denoise_loop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/families/cogvideox/cogvideox_family.h"
#include "core/families/flux/flux_family.h"
#include "core/families/pixart/pixart_family.h"
#include "core/families/sd3/sd3_family.h"
#include "core/parallel/local_attention.h"
#include "core/schedulers/dpm_solver_multistep.h"
#include "core/schedulers/flow_match_euler.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::engine {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::Uint8Close;
using families::Conditioning;
using families::DecodeOutput;
using families::DecodeRequest;
using families::GenerationRequest;
using ::testing::HasSubstr;

struct PipelineCase {
  // Golden case under tests/data/golden/pipelines.
  std::string golden;
  std::function<const families::Family&()> family;
  bool classifier_free_guidance = false;
};

void PrintTo(const PipelineCase& pipeline_case, std::ostream* out) {
  *out << pipeline_case.golden;
}

class DenoiseLoopTest : public ::testing::TestWithParam<PipelineCase> {
 protected:
  void SetUp() override {
    golden_ = std::make_unique<GoldenCase>("pipelines/" + GetParam().golden);
    families::LoadOptions options;
    options.attention = std::make_shared<parallel::LocalAttention>();
    options.prompt_encoders = false;
    absl::StatusOr<std::unique_ptr<families::FamilyModel>> model =
        GetParam().family().Load(golden_->dir(), options);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
  }

  Conditioning GoldenConditioning(const std::string& prefix) const {
    Conditioning conditioning;
    conditioning.states = golden_->Input(prefix + "prompt_embeds");
    if (HasInput(prefix + "pooled_prompt_embeds")) {
      conditioning.pooled = golden_->Input(prefix + "pooled_prompt_embeds");
    }
    if (HasInput(prefix + "prompt_attention_mask")) {
      conditioning.mask = golden_->Input(prefix + "prompt_attention_mask");
    }
    return conditioning;
  }

  bool HasInput(const std::string& name) const {
    return golden_->json().at("inputs").contains(name);
  }

  GenerationRequest Request() const {
    const nlohmann::json& json = golden_->json();
    GenerationRequest request;
    request.prompt = GoldenConditioning("");
    if (GetParam().classifier_free_guidance) {
      request.negative_prompt = GoldenConditioning("negative_");
    }
    request.height = json.at("height").get<int64_t>();
    request.width = json.at("width").get<int64_t>();
    request.num_inference_steps = json.at("num_inference_steps").get<int>();
    request.guidance_scale = json.at("guidance_scale").get<float>();
    request.seeds = {json.at("generator_seed").get<uint64_t>()};
    request.frames = json.value("num_frames", int64_t{1});
    if (json.contains("scheduler_noise_generator_seed")) {
      request.step_noise_seeds = {
          json.at("scheduler_noise_generator_seed").get<uint64_t>()};
    }
    return request;
  }

  // The golden output of the decoded `suffix` ("", "_raw", "_uint8"):
  // diffusers names a video pipeline's outputs "frames".
  std::string Decoded(const std::string& suffix) const {
    return (golden_->json().contains("num_frames") ? "frames" : "image") +
           suffix;
  }

  void ExpectClose(const at::Tensor& actual, const std::string& output) {
    EXPECT_TRUE(AllClose(actual, golden_->Output(output),
                         golden_->ToleranceFor(output)))
        << output;
  }

  absl::StatusOr<DecodeOutput> Decode(const at::Tensor& latents,
                                      const GenerationRequest& request) {
    return model_->Decode(model_->UnpackLatents(latents, request),
                          DecodeRequest{.height = request.height,
                                        .width = request.width,
                                        .frames = request.frames});
  }

  std::unique_ptr<GoldenCase> golden_;
  std::unique_ptr<families::FamilyModel> model_;
};

TEST_P(DenoiseLoopTest, SeededNoiseIsTheGoldenLatents) {
  absl::StatusOr<at::Tensor> latents = InitialLatents(*model_, Request());
  ASSERT_TRUE(latents.ok()) << latents.status();
  EXPECT_TRUE(torch::equal(*latents, golden_->Input("latents")));
}

TEST_P(DenoiseLoopTest, ScheduleMatchesThePipeline) {
  absl::StatusOr<std::unique_ptr<schedulers::Scheduler>> schedule =
      model_->Schedule(Request());
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  ExpectClose((*schedule)->timesteps(), "timesteps");
  if (!golden_->json().at("outputs").contains("sigmas")) return;
  if (const auto* flow =
          dynamic_cast<const schedulers::FlowMatchEulerDiscreteScheduler*>(
              schedule->get())) {
    ExpectClose(flow->sigmas(), "sigmas");
  } else {
    const auto* dpm =
        dynamic_cast<const schedulers::DPMSolverMultistepScheduler*>(
            schedule->get());
    ASSERT_NE(dpm, nullptr) << (*schedule)->class_name();
    ExpectClose(dpm->sigmas(), "sigmas");
  }
}

TEST_P(DenoiseLoopTest, EveryStepAndTheImageMatchDiffusers) {
  std::vector<StepEvent> events;
  const GenerationRequest request = Request();
  absl::StatusOr<at::Tensor> latents =
      Denoise(*model_, request, golden_->Input("latents"),
              [&events](const StepEvent& event) {
                events.push_back(event);
                return absl::OkStatus();
              });
  ASSERT_TRUE(latents.ok()) << latents.status();
  ASSERT_EQ(events.size(), 4U);
  for (const StepEvent& event : events) {
    EXPECT_EQ(event.num_steps, 4);
    ExpectClose(event.noise_pred,
                absl::StrCat("step.", event.step, ".noise_pred"));
    ExpectClose(event.latents, absl::StrCat("step.", event.step, ".latents"));
  }
  ExpectClose(*latents, "latents_final");

  absl::StatusOr<DecodeOutput> decoded = Decode(*latents, request);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectClose(decoded->vae_input, "vae_input");
  ExpectClose(decoded->images.raw, Decoded("_raw"));
  ExpectClose(decoded->images.image, Decoded(""));
  const nlohmann::json& rule =
      golden_->json().at("tolerance").at(Decoded("_uint8"));
  EXPECT_TRUE(Uint8Close(decoded->images.rgb,
                         golden_->Output(Decoded("_uint8")),
                         rule.at("atol").get<int>(),
                         rule.at("max_fraction_differing").get<double>()));
}

// What a preview shows: flow matching and DPM-Solver end on σ = 0, where the
// last step lands on its own estimate of the clean sample, so that estimate
// is the result; before it, the estimate is not yet the latents.
TEST_P(DenoiseLoopTest, TheLastStepsDenoisedEstimateIsTheResult) {
  absl::StatusOr<std::unique_ptr<schedulers::Scheduler>> schedule =
      model_->Schedule(Request());
  ASSERT_TRUE(schedule.ok()) << schedule.status();
  if (dynamic_cast<schedulers::FlowMatchEulerDiscreteScheduler*>(
          schedule->get()) == nullptr &&
      dynamic_cast<schedulers::DPMSolverMultistepScheduler*>(schedule->get()) ==
          nullptr) {
    GTEST_SKIP() << (*schedule)->class_name() << " does not end on σ = 0";
  }
  std::vector<at::Tensor> denoised;
  std::vector<at::Tensor> latents_after;
  absl::StatusOr<at::Tensor> latents =
      Denoise(*model_, Request(), golden_->Input("latents"),
              [&](const StepEvent& event) {
                denoised.push_back(event.denoised);
                latents_after.push_back(event.latents);
                return absl::OkStatus();
              });
  ASSERT_TRUE(latents.ok()) << latents.status();
  ASSERT_EQ(denoised.size(), 4U);
  EXPECT_TRUE(torch::allclose(denoised.back(), *latents, 1e-5, 1e-5))
      << (denoised.back() - *latents).abs().max();
  for (size_t step = 0; step + 1 < denoised.size(); ++step) {
    EXPECT_EQ(denoised[step].sizes(), latents->sizes());
    EXPECT_FALSE(torch::allclose(denoised[step], latents_after[step]))
        << "step " << step;
  }
}

TEST_P(DenoiseLoopTest, GenerateEqualsTheStagesRunInOrder) {
  absl::StatusOr<DecodeOutput> generated =
      Generate(*model_, Request(), nullptr);
  ASSERT_TRUE(generated.ok()) << generated.status();
  ExpectClose(generated->images.image, Decoded(""));
}

// Rows [first, end) of every tensor of `conditioning`.
Conditioning Rows(const Conditioning& conditioning, int64_t first,
                  int64_t end) {
  Conditioning rows;
  rows.states = conditioning.states.slice(0, first, end);
  if (conditioning.pooled.defined()) {
    rows.pooled = conditioning.pooled.slice(0, first, end);
  }
  if (conditioning.mask.defined()) {
    rows.mask = conditioning.mask.slice(0, first, end);
  }
  return rows;
}

// `conditioning`'s rows repeated `times` times.
Conditioning Repeated(const Conditioning& conditioning, int64_t times) {
  Conditioning repeated = conditioning;
  for (int64_t i = 1; i < times; ++i) {
    repeated = families::ConcatBatches(repeated, conditioning);
  }
  return repeated;
}

TEST_P(DenoiseLoopTest, EachImageOfABatchOfThreeEqualsItsSingleImage) {
  GenerationRequest golden = Request();
  // Every image's step noise (if any) from its own seed.
  golden.step_noise_seeds.clear();
  torch::manual_seed(0);
  // Two more prompts: random states and pooled vectors, one of them with
  // text padding where the family has a mask.
  Conditioning others;
  const at::Tensor& states = golden.prompt.states;
  others.states = torch::randn({2, states.size(1), states.size(2)});
  if (golden.prompt.pooled.defined()) {
    others.pooled = torch::randn({2, golden.prompt.pooled.size(1)});
  }
  if (golden.prompt.mask.defined()) {
    others.mask = torch::ones({2, states.size(1)}, torch::kLong);
    others.mask[0].slice(0, 3) = 0;
  }
  GenerationRequest batch = golden;
  batch.prompt = families::ConcatBatches(golden.prompt, others);
  if (GetParam().classifier_free_guidance) {
    batch.negative_prompt = Repeated(golden.negative_prompt, 3);
  }
  batch.seeds = {42, 43, 44};
  absl::StatusOr<DecodeOutput> together = Generate(*model_, batch, nullptr);
  ASSERT_TRUE(together.ok()) << together.status();

  for (int64_t image = 0; image < 3; ++image) {
    GenerationRequest single = golden;
    single.prompt = Rows(batch.prompt, image, image + 1);
    single.seeds = {batch.seeds[image]};
    absl::StatusOr<DecodeOutput> alone = Generate(*model_, single, nullptr);
    ASSERT_TRUE(alone.ok()) << alone.status();
    EXPECT_TRUE(AllClose(together->images.image.slice(0, image, image + 1),
                         alone->images.image, {1e-5, 1e-5}))
        << "image " << image;
  }
}

TEST_P(DenoiseLoopTest, EachImageDependsOnlyOnItsOwnSeed) {
  GenerationRequest pair = Request();
  pair.step_noise_seeds.clear();
  pair.prompt = Repeated(pair.prompt, 2);
  if (GetParam().classifier_free_guidance) {
    pair.negative_prompt = Repeated(pair.negative_prompt, 2);
  }
  pair.seeds = {7, pair.seeds[0]};
  absl::StatusOr<at::Tensor> latents = InitialLatents(*model_, pair);
  ASSERT_TRUE(latents.ok()) << latents.status();
  EXPECT_TRUE(torch::equal((*latents)[1], golden_->Input("latents")[0]));
  EXPECT_FALSE(torch::equal((*latents)[0], (*latents)[1]));
}

TEST_P(DenoiseLoopTest, SeedCountMustMatchThePromptBatch) {
  GenerationRequest request = Request();
  request.step_noise_seeds.clear();
  request.seeds = {1, 2};
  absl::StatusOr<at::Tensor> latents = InitialLatents(*model_, request);
  EXPECT_EQ(latents.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(latents.status().message(), HasSubstr("prompt_embeds has shape"));
}

TEST_P(DenoiseLoopTest, ObserverErrorStopsTheLoopAfterThatStep) {
  int calls = 0;
  absl::StatusOr<DecodeOutput> result =
      Generate(*model_, Request(), [&calls](const StepEvent& event) {
        ++calls;
        return event.step == 1 ? absl::CancelledError("client cancelled")
                               : absl::OkStatus();
      });
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(calls, 2);
}

TEST_P(DenoiseLoopTest, LatentsOfAnotherShapeAreAnError) {
  const GenerationRequest request = Request();
  absl::StatusOr<at::Tensor> latents = Denoise(
      *model_, request, golden_->Input("latents").narrow(1, 0, 1), nullptr);
  EXPECT_EQ(latents.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(latents.status().message(), HasSubstr("latents has shape"));
}

INSTANTIATE_TEST_SUITE_P(
    Families, DenoiseLoopTest,
    ::testing::Values(
        PipelineCase{"flux_dev", families::FluxFamily},
        PipelineCase{"flux_schnell", families::FluxFamily},
        PipelineCase{"pixart_sigma", families::PixArtFamily, true},
        PipelineCase{"sd3", families::SD3Family, true},
        PipelineCase{"cogvideox_5b", families::CogVideoXFamily, true},
        PipelineCase{"cogvideox15", families::CogVideoXFamily, true}),
    [](const ::testing::TestParamInfo<PipelineCase>& info) {
      return info.param.golden;
    });

// The families with classifier-free guidance.
class GuidedDenoiseLoopTest : public DenoiseLoopTest {};

TEST_P(GuidedDenoiseLoopTest, GuidanceWithoutNegativePromptIsAnError) {
  for (const char* missing :
       {"negative_prompt_embeds", "negative_pooled_prompt_embeds",
        "negative_prompt_attention_mask"}) {
    GenerationRequest request = Request();
    const std::string name = missing;
    if (name == "negative_prompt_embeds") {
      request.negative_prompt.states = at::Tensor();
    } else if (name == "negative_pooled_prompt_embeds") {
      if (!request.negative_prompt.pooled.defined()) continue;
      request.negative_prompt.pooled = at::Tensor();
    } else {
      if (!request.negative_prompt.mask.defined()) continue;
      request.negative_prompt.mask = at::Tensor();
    }
    absl::StatusOr<DecodeOutput> result = Generate(*model_, request, nullptr);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument)
        << name;
    EXPECT_THAT(result.status().message(), HasSubstr(name));
  }
}

TEST_P(GuidedDenoiseLoopTest, GuidanceOfOneRunsTheModelOnThePromptAlone) {
  GenerationRequest request = Request();
  request.guidance_scale = 1.0F;
  request.negative_prompt = Conditioning();
  int64_t model_batch = 0;
  absl::StatusOr<DecodeOutput> result =
      Generate(*model_, request, [&model_batch](const StepEvent& event) {
        model_batch = event.noise_pred.size(0);
        return absl::OkStatus();
      });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(model_batch, 1);
}

// An exchange that hands this rank's output back as both branches reduces
// guidance to that branch alone: the split must run exactly the branch it
// names, once per step on the unbatched latents.
TEST_P(GuidedDenoiseLoopTest, CfgSplitRunsTheTransformerOnItsOwnBranchOnly) {
  const GenerationRequest guided = Request();
  ASSERT_FALSE(
      torch::equal(guided.negative_prompt.states, guided.prompt.states));
  for (const int branch :
       {parallel::kNegativeBranch, parallel::kPositiveBranch}) {
    GenerationRequest split = guided;
    std::vector<int64_t> exchanged_rows;
    split.cfg_split = parallel::CfgSplit{
        branch,
        [&exchanged_rows](const at::Tensor& own) -> absl::StatusOr<at::Tensor> {
          exchanged_rows.push_back(own.size(0));
          return at::cat({own, own});
        }};
    GenerationRequest branch_alone = guided;
    branch_alone.guidance_scale = 1.0F;
    if (branch == parallel::kNegativeBranch) {
      branch_alone.prompt = guided.negative_prompt;
    }
    absl::StatusOr<at::Tensor> from_split =
        Denoise(*model_, split, golden_->Input("latents"), nullptr);
    absl::StatusOr<at::Tensor> from_branch =
        Denoise(*model_, branch_alone, golden_->Input("latents"), nullptr);
    ASSERT_TRUE(from_split.ok()) << from_split.status();
    ASSERT_TRUE(from_branch.ok()) << from_branch.status();
    EXPECT_TRUE(torch::equal(*from_split, *from_branch)) << branch;
    EXPECT_EQ(exchanged_rows,
              std::vector<int64_t>(guided.num_inference_steps, 1));
  }
}

TEST_P(GuidedDenoiseLoopTest, CfgSplitExchangeOfTheWrongSizeIsAnError) {
  GenerationRequest request = Request();
  request.cfg_split = parallel::CfgSplit{
      parallel::kPositiveBranch,
      [](const at::Tensor& own) -> absl::StatusOr<at::Tensor> { return own; }};
  absl::StatusOr<at::Tensor> latents =
      Denoise(*model_, request, golden_->Input("latents"), nullptr);
  EXPECT_EQ(latents.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(latents.status().message(),
              HasSubstr("exchanged guidance branches has shape [1, "));
}

TEST_P(GuidedDenoiseLoopTest, CfgSplitExchangeErrorStopsTheLoop) {
  GenerationRequest request = Request();
  request.cfg_split = parallel::CfgSplit{
      parallel::kNegativeBranch,
      [](const at::Tensor&) -> absl::StatusOr<at::Tensor> {
        return absl::DeadlineExceededError("cfg peer silent");
      }};
  absl::StatusOr<at::Tensor> latents =
      Denoise(*model_, request, golden_->Input("latents"), nullptr);
  EXPECT_EQ(latents.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(latents.status().message(), HasSubstr("cfg peer silent"));
}

TEST_P(GuidedDenoiseLoopTest, CfgSplitWithoutGuidanceIsAnError) {
  GenerationRequest request = Request();
  request.guidance_scale = 1.0F;
  request.cfg_split = parallel::CfgSplit{
      parallel::kNegativeBranch,
      [](const at::Tensor& own) -> absl::StatusOr<at::Tensor> { return own; }};
  absl::StatusOr<at::Tensor> latents = InitialLatents(*model_, request);
  EXPECT_EQ(latents.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(latents.status().message(),
              HasSubstr("cfg_split needs classifier-free guidance"));
}

INSTANTIATE_TEST_SUITE_P(
    Families, GuidedDenoiseLoopTest,
    ::testing::Values(
        PipelineCase{"pixart_sigma", families::PixArtFamily, true},
        PipelineCase{"sd3", families::SD3Family, true},
        PipelineCase{"cogvideox15", families::CogVideoXFamily, true}),
    [](const ::testing::TestParamInfo<PipelineCase>& info) {
      return info.param.golden;
    });

TEST(GuidanceScaleTest, DynamicCfgFollowsDiffusersRampOverTheTimestepValue) {
  GenerationRequest request;
  request.guidance_scale = 6.0F;
  request.num_inference_steps = 50;
  EXPECT_EQ(GuidanceScaleAt(request, torch::tensor(999)), 6.0);
  request.dynamic_cfg = true;
  // Python's 1 + 6.0 * ((1 - math.cos(math.pi * ((N - t) / N) ** 5.0)) / 2).
  EXPECT_NEAR(GuidanceScaleAt(request, torch::tensor(999)), 2.291487174551452,
              1e-9);
  EXPECT_NEAR(GuidanceScaleAt(request, torch::tensor(500)), 7.0, 1e-9);
  EXPECT_NEAR(GuidanceScaleAt(request, torch::tensor(20)), 1.0890722913093067,
              1e-9);
  EXPECT_NEAR(GuidanceScaleAt(request, torch::tensor(49)), 1.0, 1e-9);
  request.num_inference_steps = 4;
  EXPECT_NEAR(GuidanceScaleAt(request, torch::tensor(1)), 1.7957833657121096,
              1e-9);
}

// diffusers' CogVideoX pipelines upcast the transformer's output before
// guidance (noise_pred.float()), so guidance and the scheduler's step run in
// float32 and only the new latents are rounded to bfloat16. In bfloat16 the
// guided difference would lose bits that a guidance scale of 6 magnifies.
TEST(DenoiseLoopCfgTest, CogVideoXGuidesAndStepsInFloat32InABfloat16Model) {
  const GoldenCase golden("pipelines/cogvideox_5b");
  families::LoadOptions options;
  options.attention = std::make_shared<parallel::LocalAttention>();
  options.placement = {.dtype = at::kBFloat16};
  options.prompt_encoders = false;
  absl::StatusOr<std::unique_ptr<families::FamilyModel>> model =
      families::CogVideoXFamily().Load(golden.dir(), options);
  ASSERT_TRUE(model.ok()) << model.status();
  GenerationRequest request;
  request.prompt =
      Conditioning{.states = golden.Input("prompt_embeds").to(at::kBFloat16)};
  request.negative_prompt = Conditioning{
      .states = golden.Input("negative_prompt_embeds").to(at::kBFloat16)};
  request.height = golden.json().at("height").get<int64_t>();
  request.width = golden.json().at("width").get<int64_t>();
  request.frames = golden.json().at("num_frames").get<int64_t>();
  request.num_inference_steps = 4;
  request.guidance_scale = 6.0F;
  request.seeds = {golden.json().at("generator_seed").get<uint64_t>()};
  const at::Tensor initial = golden.Input("latents").to(at::kBFloat16);
  std::vector<StepEvent> events;
  absl::StatusOr<at::Tensor> latents =
      Denoise(**model, request, initial, [&events](const StepEvent& event) {
        events.push_back(event);
        return absl::OkStatus();
      });
  ASSERT_TRUE(latents.ok()) << latents.status();
  ASSERT_FALSE(events.empty());
  const std::vector<at::Tensor> halves =
      events[0].noise_pred.to(at::kFloat).chunk(2, /*dim=*/0);
  const at::Tensor guided = halves[0] + 6.0 * (halves[1] - halves[0]);
  absl::StatusOr<std::unique_ptr<schedulers::Scheduler>> scheduler =
      (*model)->Schedule(request);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  absl::StatusOr<schedulers::StepOutput> stepped =
      (*scheduler)->Step(guided, initial, {});
  ASSERT_TRUE(stepped.ok()) << stepped.status();
  EXPECT_EQ(events[0].latents.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(
      at::equal(events[0].latents, stepped->prev_sample.to(at::kBFloat16)));
}

TEST(DenoiseLoopCfgTest,
     CfgSplitOfAFamilyWithoutClassifierFreeGuidanceIsAnError) {
  const GoldenCase golden("pipelines/flux_dev");
  families::LoadOptions options;
  options.attention = std::make_shared<parallel::LocalAttention>();
  options.prompt_encoders = false;
  absl::StatusOr<std::unique_ptr<families::FamilyModel>> model =
      families::FluxFamily().Load(golden.dir(), options);
  ASSERT_TRUE(model.ok()) << model.status();
  GenerationRequest request;
  request.prompt = Conditioning{.states = golden.Input("prompt_embeds"),
                                .pooled = golden.Input("pooled_prompt_embeds")};
  request.height = golden.json().at("height").get<int64_t>();
  request.width = golden.json().at("width").get<int64_t>();
  request.num_inference_steps = 2;
  request.guidance_scale = 3.5F;
  request.seeds = {0};
  request.cfg_split = parallel::CfgSplit{
      parallel::kNegativeBranch,
      [](const at::Tensor& own) -> absl::StatusOr<at::Tensor> { return own; }};
  absl::StatusOr<at::Tensor> latents = InitialLatents(**model, request);
  EXPECT_EQ(latents.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(latents.status().message(),
              HasSubstr("no classifier-free guidance to split"));
}

}  // namespace
}  // namespace ditserve::engine
