#include "core/families/flux/flux_pipeline_stages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/families/flux/flux_transformer_loader.h"
#include "core/parallel/local_attention.h"
#include "tests/unit/families/flux/flux_golden_inputs.h"
#include "tests/unit/families/thread_sequence_parallel.h"
#include "tests/unit/models/golden_case.h"
#include "tests/unit/parallel/thread_rank_groups.h"

namespace ditserve::families {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::FluxGoldenInputs;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::RunOnRankThreads;
using ::ditserve::testing::SingleRankFluxForward;
using ::ditserve::testing::ThreadPipeFusion;
using ::ditserve::testing::ThreadRankGroups;
using ::ditserve::testing::ThreadStage;
using ::testing::HasSubstr;

constexpr std::chrono::milliseconds kTimeout{30000};

std::shared_ptr<models::FluxTransformer2DModel> LoadStage(
    const GoldenCase& golden, int stage, int stages,
    std::shared_ptr<models::Attention> attention) {
  absl::StatusOr<models::FluxTransformerConfig> config =
      models::ReadFluxTransformerConfig(golden.dir() + "/config.json");
  EXPECT_TRUE(config.ok()) << config.status();
  if (!config.ok()) return nullptr;
  absl::StatusOr<std::shared_ptr<models::FluxTransformer2DModel>> model =
      models::LoadFluxTransformer2DModel(
          golden.dir(), std::move(attention), models::Placement{},
          models::FluxStageBlocks(*config, stage, stages));
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

// Receive buffers as the engine plans them: one fresh tensor of the shape.
// The golden case's 16 image tokens (a 4×4 grid) in patches of 1 and 3 rows.
// The cases here stop before any noise prediction travels back, so `group`
// serves as the feedback group too.
parallel::PipeFusionStages StagesOver(const parallel::Group& group) {
  return {.group = group,
          .feedback = group,
          .receive_buffer = [](parallel::StageTensor, int,
                               const std::vector<int64_t>& shape)
              -> absl::StatusOr<at::Tensor> { return at::zeros(shape); },
          .stale_kv = std::make_shared<parallel::StaleKvAttention>(),
          .warmup_steps = 1,
          .patch_offsets = {0, 4, 16}};
}

struct StagesCase {
  int stages = 2;
  // Sequence-parallel ranks per stage.
  int sp = 1;
  bool ulysses = false;

  std::string Name() const {
    if (sp == 1) return absl::StrCat("pp", stages);
    return absl::StrCat("pp", stages, ulysses ? "_ulysses" : "_ring", sp);
  }
};

void PrintTo(const StagesCase& sharded, std::ostream* out) {
  *out << sharded.Name();
}

class StagedFluxForwardTest : public ::testing::TestWithParam<StagesCase> {};

// Every rank ends with the whole forward, computed stage after stage and
// then patch after patch (same inputs again: the cached keys and values of
// the other patches are the fresh ones, so nothing is stale); with sequence
// parallelism each stage's sp ranks split every forward's image tokens.
TEST_P(StagedFluxForwardTest, EveryRankGetsTheWholeForward) {
  const StagesCase& sharded = GetParam();
  const GoldenCase golden("models/flux_dev");
  const models::FluxTransformerInputs inputs =
      FluxGoldenInputs(golden, /*guidance=*/true);
  const absl::StatusOr<at::Tensor> expected =
      SingleRankFluxForward(golden, inputs);
  torch::NoGradGuard no_grad;
  ASSERT_TRUE(expected.ok()) << expected.status();

  std::vector<ThreadStage> ranks = ThreadPipeFusion(
      sharded.stages, sharded.sp, sharded.ulysses, {0, 4, 16}, kTimeout);
  std::vector<std::shared_ptr<models::FluxTransformer2DModel>> transformers;
  for (int rank = 0; rank < sharded.stages * sharded.sp; ++rank) {
    transformers.push_back(LoadStage(golden, rank / sharded.sp, sharded.stages,
                                     ranks[rank].attention));
    ASSERT_NE(transformers.back(), nullptr);
  }
  // Step 0 runs the whole sequence; step 1 the patch pipeline, first with
  // the text patch, then as the last of 2 steps without it (its image
  // patches attend to the text keys and values the step before left).
  struct Pass {
    int step;
    int steps;
  };
  for (const Pass pass : {Pass{0, 0}, Pass{1, 0}, Pass{1, 2}}) {
    const bool patched = pass.step > 0;
    for (ThreadStage& rank : ranks) rank.stages.steps = pass.steps;
    const std::vector<absl::StatusOr<at::Tensor>> outputs =
        RunOnRankThreads(sharded.stages * sharded.sp, [&](int rank) {
          return FluxStageForward(*transformers[rank], inputs,
                                  ranks[rank].stages, pass.step);
        });
    for (size_t rank = 0; rank < outputs.size(); ++rank) {
      ASSERT_TRUE(outputs[rank].ok()) << outputs[rank].status();
      if (!patched && sharded.sp == 1) {
        // The same operations in the same order: bit-identical.
        EXPECT_TRUE(outputs[rank]->equal(*expected)) << "rank " << rank;
        continue;
      }
      // Matmuls over fewer rows and attention over gathered heads: float32
      // ulps. A token taken from the wrong rank or a key written to the
      // wrong row moves outputs by 1e-2 or more.
      EXPECT_TRUE(AllClose(*outputs[rank], *expected, {1e-5, 1e-5}))
          << "step " << pass.step << " of " << pass.steps << ", rank " << rank
          << ", max |error| "
          << (*outputs[rank] - *expected).abs().max().item<float>();
    }
  }
}

// The golden model's 3 blocks as 2 stages (1 + 2) and 3 stages (1 + 1 + 1);
// it has 2 heads. Ring 3 splits the 16 image tokens into shares of 6 (the
// last moved back to [10, 16), sharing 2 tokens) and the first patch's 4
// into shares of 2, the third rank owning none of them.
INSTANTIATE_TEST_SUITE_P(
    Layouts, StagedFluxForwardTest,
    ::testing::Values(StagesCase{.stages = 2}, StagesCase{.stages = 3},
                      StagesCase{.sp = 2}, StagesCase{.sp = 2, .ulysses = true},
                      StagesCase{.sp = 3},
                      StagesCase{.stages = 3, .sp = 2, .ulysses = true}),
    [](const ::testing::TestParamInfo<StagesCase>& info) {
      return info.param.Name();
    });

// A stage that starts late is the other stage's wait, on a whole-sequence
// step (the first stage waits for the late last one's noise prediction) and
// on a patch step (the last stage waits for the late first one's patches).
TEST(PipeFusionWaitTest, AStageThatStartsLateIsTheOtherStagesWait) {
  const GoldenCase golden("models/flux_dev");
  const models::FluxTransformerInputs inputs =
      FluxGoldenInputs(golden, /*guidance=*/true);
  std::vector<ThreadStage> ranks =
      ThreadPipeFusion(2, 1, /*ulysses=*/false, {0, 4, 16}, kTimeout);
  std::vector<std::shared_ptr<models::FluxTransformer2DModel>> transformers;
  for (int rank = 0; rank < 2; ++rank) {
    transformers.push_back(LoadStage(golden, rank, 2, ranks[rank].attention));
    ASSERT_NE(transformers.back(), nullptr);
  }
  std::vector<double> waited(2);
  for (int rank = 0; rank < 2; ++rank) {
    ranks[rank].stages.waited = [&waited, rank](double seconds) {
      waited[rank] += seconds;
    };
  }
  constexpr std::chrono::milliseconds kLate{300};
  torch::NoGradGuard no_grad;
  // One untimed whole-sequence step first: the first products of a process
  // also pay for oneDNN generating its GEMM kernels, which is not a wait.
  for (const absl::StatusOr<at::Tensor>& output :
       RunOnRankThreads(2, [&](int rank) {
         return FluxStageForward(*transformers[rank], inputs,
                                 ranks[rank].stages, /*step=*/0);
       })) {
    ASSERT_TRUE(output.ok()) << output.status();
  }
  for (const int step : {0, 1}) {
    const int late = step == 0 ? 1 : 0;
    const int other = 1 - late;
    waited = {0, 0};
    const std::vector<absl::StatusOr<at::Tensor>> outputs =
        RunOnRankThreads(2, [&](int rank) {
          if (rank == late) std::this_thread::sleep_for(kLate);
          return FluxStageForward(*transformers[rank], inputs,
                                  ranks[rank].stages, step);
        });
    for (const absl::StatusOr<at::Tensor>& output : outputs) {
      ASSERT_TRUE(output.ok()) << output.status();
    }
    // kLate, less at most the first stage's one block (milliseconds here).
    EXPECT_GE(waited[other], 0.25) << "step " << step;
    EXPECT_LT(waited[late], waited[other]) << "step " << step;
  }
}

TEST(StagedFluxForwardErrorsTest, SilentSequenceParallelRankIsATimeout) {
  const GoldenCase golden("models/flux_dev");
  // One stage over two ring ranks; only the first runs, so its first
  // attention layer waits for the other's keys and values in vain.
  std::vector<ThreadStage> ranks = ThreadPipeFusion(
      1, 2, /*ulysses=*/false, {0, 4, 16}, std::chrono::milliseconds(500));
  std::shared_ptr<models::FluxTransformer2DModel> model =
      LoadStage(golden, 0, 1, ranks[0].attention);
  ASSERT_NE(model, nullptr);
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> output =
      FluxStageForward(*model, FluxGoldenInputs(golden, /*guidance=*/true),
                       ranks[0].stages, /*step=*/0);
  EXPECT_FALSE(output.ok());
  EXPECT_THAT(output.status().message(),
              HasSubstr("PipeFusion all-gather of the ring's keys and values"));
}

TEST(PipeFusionStagesTest, WarmupStepsAndAlwaysTheFirstRunWhole) {
  parallel::PipeFusionStages stages;
  stages.warmup_steps = 2;
  EXPECT_TRUE(stages.IsWholeSequenceStep(0));
  EXPECT_TRUE(stages.IsWholeSequenceStep(1));
  EXPECT_FALSE(stages.IsWholeSequenceStep(2));
  // Patches need a previous step's keys and values.
  stages.warmup_steps = 0;
  EXPECT_TRUE(stages.IsWholeSequenceStep(0));
  EXPECT_FALSE(stages.IsWholeSequenceStep(1));
}

TEST(PatchedFluxForwardTest, OtherPatchesAttendWithLastStepsKeys) {
  const GoldenCase golden("models/flux_dev");
  models::FluxTransformerInputs inputs =
      FluxGoldenInputs(golden, /*guidance=*/true);
  std::vector<parallel::Group> groups = ThreadRankGroups("pp", 1, kTimeout);
  parallel::PipeFusionStages stages = StagesOver(groups[0]);
  std::shared_ptr<models::FluxTransformer2DModel> model =
      LoadStage(golden, 0, 1, stages.stale_kv);
  ASSERT_NE(model, nullptr);
  torch::NoGradGuard no_grad;
  ASSERT_TRUE(FluxStageForward(*model, inputs, stages, /*step=*/0).ok());
  // A later step: other latents. The fresh forward differs from the patch
  // pipeline's, whose first patch sees the last step's keys of the second.
  inputs.hidden_states = inputs.hidden_states * 0.5;
  absl::StatusOr<at::Tensor> patched =
      FluxStageForward(*model, inputs, stages, /*step=*/1);
  ASSERT_TRUE(patched.ok()) << patched.status();
  absl::StatusOr<at::Tensor> fresh =
      FluxStageForward(*model, inputs, stages, /*step=*/0);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  const at::Tensor first_patch_error =
      (patched->narrow(1, 0, 4) - fresh->narrow(1, 0, 4)).abs().max();
  EXPECT_GT(first_patch_error.item<float>(), 1e-4);
}

TEST(PatchedFluxForwardTest, OffsetsThatDoNotSplitTheImageAreAnError) {
  const GoldenCase golden("models/flux_dev");
  std::vector<parallel::Group> groups = ThreadRankGroups("pp", 1, kTimeout);
  parallel::PipeFusionStages stages = StagesOver(groups[0]);
  stages.patch_offsets = {0, 4, 12};
  std::shared_ptr<models::FluxTransformer2DModel> model =
      LoadStage(golden, 0, 1, stages.stale_kv);
  ASSERT_NE(model, nullptr);
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> output = FluxStageForward(
      *model, FluxGoldenInputs(golden, /*guidance=*/true), stages, /*step=*/1);
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(output.status().message(),
              HasSubstr("[0, 4, 12] do not split the 16 image tokens"));
}

TEST(StagedFluxForwardErrorsTest, RefusedReceiveBufferStopsTheStage) {
  const GoldenCase golden("models/flux_dev");
  std::shared_ptr<models::FluxTransformer2DModel> second =
      LoadStage(golden, 1, 2, std::make_shared<parallel::LocalAttention>());
  ASSERT_NE(second, nullptr);
  // Stage 1 asks for its buffer before waiting for stage 0, so one thread
  // suffices.
  std::vector<parallel::Group> groups =
      ThreadRankGroups("pp", 2, std::chrono::milliseconds(2000));
  parallel::PipeFusionStages stages = StagesOver(groups[1]);
  stages.receive_buffer =
      [](parallel::StageTensor, int,
         const std::vector<int64_t>& shape) -> absl::StatusOr<at::Tensor> {
    return absl::InternalError(
        absl::StrCat("planned for another shape than ", shape[1], " tokens"));
  };
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> output = FluxStageForward(
      *second, FluxGoldenInputs(golden, /*guidance=*/true), stages, /*step=*/0);
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(output.status().message(),
              HasSubstr("planned for another shape than 8 tokens"));
}

TEST(StagedFluxForwardErrorsTest, SilentPreviousStageIsATimeoutNotAHang) {
  const GoldenCase golden("models/flux_dev");
  std::shared_ptr<models::FluxTransformer2DModel> second =
      LoadStage(golden, 1, 2, std::make_shared<parallel::LocalAttention>());
  ASSERT_NE(second, nullptr);
  std::vector<parallel::Group> groups =
      ThreadRankGroups("pp", 2, std::chrono::milliseconds(500));
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> output =
      FluxStageForward(*second, FluxGoldenInputs(golden, /*guidance=*/true),
                       StagesOver(groups[1]), /*step=*/0);
  EXPECT_FALSE(output.ok());
  EXPECT_THAT(output.status().message(), HasSubstr("previous stage"));
}

}  // namespace
}  // namespace ditserve::families
