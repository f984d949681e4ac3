#include "core/families/flux/flux_transformer_2d_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <condition_variable>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/base/status_error.h"
#include "core/families/flux/flux_transformer_block.h"
#include "core/families/flux/flux_transformer_loader.h"
#include "core/parallel/local_attention.h"
#include "tests/unit/families/flux/flux_golden_inputs.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::models {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::FluxGoldenInputs;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::InDType;
using ::testing::HasSubstr;

std::shared_ptr<FluxTransformer2DModel> LoadGoldenModel(
    const GoldenCase& golden) {
  absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>> model =
      LoadFluxTransformer2DModel(golden.dir(),
                                 std::make_shared<parallel::LocalAttention>(),
                                 Placement{});
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? *model : nullptr;
}

TEST(FluxTransformer2DModelTest, DevMatchesDiffusersWithGuidanceEmbedding) {
  const GoldenCase golden("models/flux_dev");
  std::shared_ptr<FluxTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  FluxTransformerInputs inputs = FluxGoldenInputs(golden, /*guidance=*/false);
  inputs.guidance = golden.Input("guidance");
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_TRUE(AllClose(*sample, golden.Output("sample"),
                       golden.ToleranceFor("sample")));
}

TEST(FluxTransformer2DModelTest, SchnellMatchesDiffusersWithoutGuidance) {
  const GoldenCase golden("models/flux_schnell");
  std::shared_ptr<FluxTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample =
      model->Forward(FluxGoldenInputs(golden, /*guidance=*/false));
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_TRUE(AllClose(*sample, golden.Output("sample"),
                       golden.ToleranceFor("sample")));
}

// A bfloat16 model on bfloat16 inputs, as a pipeline in that dtype runs it,
// within twice diffusers' own bfloat16 error of the float32 reference.
void ExpectBfloat16Sample(const std::string& case_dir, bool guidance) {
  const GoldenCase golden(case_dir);
  absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>> model =
      LoadFluxTransformer2DModel(golden.dir(),
                                 std::make_shared<parallel::LocalAttention>(),
                                 Placement{.dtype = at::kBFloat16});
  ASSERT_TRUE(model.ok()) << model.status();
  FluxTransformerInputs inputs = FluxGoldenInputs(golden, guidance);
  for (at::Tensor* input :
       {&inputs.hidden_states, &inputs.encoder_hidden_states,
        &inputs.pooled_projections, &inputs.timestep, &inputs.img_ids,
        &inputs.txt_ids}) {
    *input = InDType(*input, at::kBFloat16);
  }
  if (guidance) inputs.guidance = InDType(*inputs.guidance, at::kBFloat16);
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample = (*model)->Forward(inputs);
  ASSERT_TRUE(sample.ok()) << sample.status();
  golden.ExpectBfloat16Close(*sample, "sample");
}

TEST(FluxTransformer2DModelTest, DevInBfloat16IsWithinTheDerivedTolerance) {
  ExpectBfloat16Sample("models/flux_dev", /*guidance=*/true);
}

TEST(FluxTransformer2DModelTest, SchnellInBfloat16IsWithinTheDerivedTolerance) {
  ExpectBfloat16Sample("models/flux_schnell", /*guidance=*/false);
}

// float16 matrix products need CUDA, so the blocks' use of the clamp runs
// on a GPU only; the clamp itself is checked here.
TEST(ClipToFloat16RangeTest, ClampsFloat16OnlyToItsFiniteRange) {
  const double largest = 65504;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const at::Tensor half =
      torch::tensor({1e6, -1e6, 70000.0, 1.5, nan}).to(torch::kHalf);
  ASSERT_TRUE(half[0].isinf().item<bool>());
  const at::Tensor clipped = ClipToFloat16Range(half).to(torch::kFloat);
  EXPECT_TRUE(torch::equal(clipped.narrow(0, 0, 4),
                           torch::tensor({largest, -largest, largest, 1.5})));
  EXPECT_TRUE(clipped[4].isnan().item<bool>());
  const at::Tensor wide = torch::tensor({1e30, -1e30}).to(torch::kBFloat16);
  EXPECT_TRUE(torch::equal(ClipToFloat16Range(wide), wide));
}

TEST(FluxTransformer2DModelTest, MissingGuidanceIsAnErrorForDevModels) {
  const GoldenCase golden("models/flux_dev");
  std::shared_ptr<FluxTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  absl::StatusOr<at::Tensor> sample =
      model->Forward(FluxGoldenInputs(golden, /*guidance=*/false));
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(), HasSubstr("guidance is missing"));
}

TEST(FluxTransformer2DModelTest, GuidanceIsAnErrorForSchnellModels) {
  const GoldenCase golden("models/flux_schnell");
  std::shared_ptr<FluxTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  FluxTransformerInputs inputs = FluxGoldenInputs(golden, /*guidance=*/false);
  inputs.guidance = torch::full({2}, 3.5);
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(), HasSubstr("guidance_embeds=false"));
}

TEST(FluxTransformer2DModelTest, WrongChannelCountNamesTheInputAndShapes) {
  const GoldenCase golden("models/flux_schnell");
  std::shared_ptr<FluxTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  FluxTransformerInputs inputs = FluxGoldenInputs(golden, /*guidance=*/false);
  inputs.hidden_states = torch::zeros({2, 16, 32});
  absl::StatusOr<at::Tensor> sample = model->Forward(inputs);
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sample.status().message(),
              HasSubstr("hidden_states has shape [2, 16, 32]; expected [*, "
                        "*, 64]"));
}

TEST(FluxTransformer2DModelTest, BlockRangeBuildsAndLoadsOnlyThoseBlocks) {
  const GoldenCase golden("models/flux_dev");
  // Blocks in execution order: transformer_blocks.0, then
  // single_transformer_blocks.0 and .1; this stage holds the last one.
  absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>> stage =
      LoadFluxTransformer2DModel(golden.dir(),
                                 std::make_shared<parallel::LocalAttention>(),
                                 Placement{}, BlockRange{2, 3});
  ASSERT_TRUE(stage.ok()) << stage.status();
  bool has_block_1 = false;
  for (const auto& parameter : (*stage)->named_parameters()) {
    EXPECT_THAT(parameter.key(), ::testing::Not(HasSubstr("blocks.0.")));
    has_block_1 |=
        parameter.key().rfind("single_transformer_blocks.1.", 0) == 0;
  }
  EXPECT_TRUE(has_block_1);
  absl::StatusOr<io::TensorMap> weights =
      io::ReadAllTensors(golden.dir() + "/diffusion_pytorch_model.safetensors");
  ASSERT_TRUE(weights.ok()) << weights.status();
  const std::string name = "single_transformer_blocks.1.proj_out.weight";
  EXPECT_TRUE((*stage)->named_parameters()[name].equal(weights->at(name)));
}

TEST(FluxTransformer2DModelTest, PartialModelRefusesAWholeForward) {
  const GoldenCase golden("models/flux_schnell");
  absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>> stage =
      LoadFluxTransformer2DModel(golden.dir(),
                                 std::make_shared<parallel::LocalAttention>(),
                                 Placement{}, BlockRange{0, 1});
  ASSERT_TRUE(stage.ok()) << stage.status();
  absl::StatusOr<at::Tensor> sample =
      (*stage)->Forward(FluxGoldenInputs(golden, /*guidance=*/false));
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(sample.status().message(), HasSubstr("holds blocks [0, 1) of 3"));
}

std::shared_ptr<FluxTransformer2DModel> LoadStage(const GoldenCase& golden,
                                                  BlockRange blocks) {
  absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>> stage =
      LoadFluxTransformer2DModel(golden.dir(),
                                 std::make_shared<parallel::LocalAttention>(),
                                 Placement{}, blocks);
  EXPECT_TRUE(stage.ok()) << stage.status();
  return stage.ok() ? *stage : nullptr;
}

TEST(FluxTransformer2DModelTest, StagesChainedEqualTheWholeForward) {
  const GoldenCase golden("models/flux_dev");
  FluxTransformerInputs inputs = FluxGoldenInputs(golden, /*guidance=*/false);
  inputs.guidance = golden.Input("guidance");
  torch::NoGradGuard no_grad;
  // The golden model has 3 blocks: a double-stream block, then two single-
  // stream blocks; stages of one block each cross that boundary.
  std::optional<FluxStreams> streams;
  std::shared_ptr<FluxTransformer2DModel> stage;
  for (int64_t block = 0; block < 3; ++block) {
    stage = LoadStage(golden, BlockRange{block, block + 1});
    ASSERT_NE(stage, nullptr);
    absl::StatusOr<FluxStreams> out = stage->ForwardStage(inputs, streams);
    ASSERT_TRUE(out.ok()) << out.status();
    streams = *out;
  }
  absl::StatusOr<at::Tensor> sample =
      stage->StageOutput(inputs, streams->image);
  ASSERT_TRUE(sample.ok()) << sample.status();
  EXPECT_TRUE(AllClose(*sample, golden.Output("sample"),
                       golden.ToleranceFor("sample")));
}

TEST(FluxTransformer2DModelTest, StageStreamsMustMatchItsPlace) {
  const GoldenCase golden("models/flux_schnell");
  const FluxTransformerInputs inputs =
      FluxGoldenInputs(golden, /*guidance=*/false);
  torch::NoGradGuard no_grad;
  std::shared_ptr<FluxTransformer2DModel> first =
      LoadStage(golden, BlockRange{0, 1});
  std::shared_ptr<FluxTransformer2DModel> second =
      LoadStage(golden, BlockRange{1, 3});
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  absl::StatusOr<FluxStreams> streams = first->ForwardStage(inputs, {});
  ASSERT_TRUE(streams.ok()) << streams.status();

  EXPECT_THAT(
      first->ForwardStage(inputs, *streams).status().message(),
      HasSubstr("embeds the inputs itself and takes no incoming streams"));
  EXPECT_THAT(second->ForwardStage(inputs, {}).status().message(),
              HasSubstr("needs the previous stage's streams"));
  FluxStreams short_text = *streams;
  short_text.text = short_text.text.narrow(1, 0, 1);
  absl::Status status = second->ForwardStage(inputs, short_text).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("incoming text stream"));
  status = first->StageOutput(inputs, streams->image).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("only the last PipeFusion stage"));
}

// A block's work per token is the same for both kinds (see FluxStageBlocks),
// so stages differ by at most one block however the kinds fall.
TEST(FluxStageBlocksTest, StagesSplitTheBlocksEvenlyAndInOrder) {
  FluxTransformerConfig config;
  config.num_layers = 4;
  config.num_single_layers = 8;
  for (int stages = 2; stages <= 5; ++stages) {
    int64_t begin = 0;
    for (int stage = 0; stage < stages; ++stage) {
      const BlockRange range = FluxStageBlocks(config, stage, stages);
      EXPECT_EQ(range.begin, begin) << stage << " of " << stages;
      const int64_t blocks = range.end - range.begin;
      EXPECT_GE(blocks, config.total_blocks() / stages)
          << stage << " of " << stages;
      EXPECT_LE(blocks, (config.total_blocks() + stages - 1) / stages)
          << stage << " of " << stages;
      begin = range.end;
    }
    EXPECT_EQ(begin, config.total_blocks()) << stages << " stages";
  }
}

TEST(FluxStageBlocksTest, AsManyStagesAsBlocksGetOneBlockEach) {
  FluxTransformerConfig config;
  config.num_layers = 2;
  config.num_single_layers = 3;
  for (int stage = 0; stage < 5; ++stage) {
    const BlockRange range = FluxStageBlocks(config, stage, 5);
    EXPECT_EQ(range.begin, stage);
    EXPECT_EQ(range.end, stage + 1);
  }
}

TEST(FluxTransformer2DModelTest, EmptyOrOutOfRangeBlockRangeIsAnError) {
  absl::StatusOr<FluxTransformerConfig> config =
      ReadFluxTransformerConfig(std::string(DITSERVE_TEST_DATA_DIR) +
                                "/golden/models/flux_dev/config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  for (const BlockRange range :
       {BlockRange{1, 1}, BlockRange{0, 4}, BlockRange{-1, 2}}) {
    absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>> model =
        FluxTransformer2DModel::Create(
            *config, std::make_shared<parallel::LocalAttention>(), range);
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument)
        << range.begin << ".." << range.end;
  }
}

// Sequence parallelism inside one process: shard i runs on thread i, and
// AllGather hands every thread all threads' parts once each has arrived, in
// shard order (one round per call, as every shard reaches the same
// attention layers in the same order).
class ThreadShards {
 public:
  explicit ThreadShards(int shards) : parts_(shards) {}

  std::vector<at::Tensor> AllGather(int index, at::Tensor part) {
    std::unique_lock<std::mutex> lock(mutex_);
    parts_[index] = std::move(part);
    const int64_t round = round_;
    if (++arrived_ == static_cast<int>(parts_.size())) {
      gathered_ = parts_;
      arrived_ = 0;
      ++round_;
      all_arrived_.notify_all();
    } else if (!all_arrived_.wait_for(lock, std::chrono::seconds(60),
                                      [&] { return round_ != round; })) {
      // A shard that failed before this layer would leave the others
      // waiting forever.
      throw std::runtime_error("a shard never reached this attention layer");
    }
    return gathered_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable all_arrived_;
  std::vector<at::Tensor> parts_;
  std::vector<at::Tensor> gathered_;
  int arrived_ = 0;
  int64_t round_ = 0;
};

// Attention of shard `index`: gathers every shard's keys, values and key
// mask and attends over the whole padded sequence, as the sequence-parallel
// attentions do with collectives.
class GatheringAttention : public models::Attention {
 public:
  GatheringAttention(std::shared_ptr<ThreadShards> shards, int index)
      : shards_(std::move(shards)), index_(index) {}

  at::Tensor Attend(const at::Tensor& q, const at::Tensor& k,
                    const at::Tensor& v,
                    const std::optional<at::Tensor>& key_mask) override {
    const at::Tensor mask = key_mask.value_or(
        at::ones({k.size(0), k.size(2)}, at::TensorOptions(at::kBool)));
    const at::Tensor keys = at::cat(shards_->AllGather(index_, k), 2);
    const at::Tensor values = at::cat(shards_->AllGather(index_, v), 2);
    const at::Tensor masks = at::cat(shards_->AllGather(index_, mask), 1);
    return parallel::LocalAttention().Attend(q, keys, values, masks);
  }

 private:
  std::shared_ptr<ThreadShards> shards_;
  int index_;
};

// The golden dev case's 8 text + 16 image = 24 joint tokens, zero-padded to
// shards × shard_tokens.
struct ShardSplit {
  int shards;
  int64_t shard_tokens;
};

class FluxShardedForwardTest : public ::testing::TestWithParam<ShardSplit> {};

TEST_P(FluxShardedForwardTest, ShardsConcatenateToTheUnshardedForward) {
  const GoldenCase golden("models/flux_dev");
  std::shared_ptr<FluxTransformer2DModel> reference = LoadGoldenModel(golden);
  ASSERT_NE(reference, nullptr);
  FluxTransformerInputs inputs = FluxGoldenInputs(golden, /*guidance=*/false);
  inputs.guidance = golden.Input("guidance");
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> expected = reference->Forward(inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();

  const auto [shards, shard_tokens] = GetParam();
  const int64_t text = inputs.encoder_hidden_states.size(1);
  const int64_t joint = text + inputs.hidden_states.size(1);
  const int64_t padded = shards * shard_tokens;
  ASSERT_EQ(joint, 24);
  auto hub = std::make_shared<ThreadShards>(shards);
  std::vector<std::shared_ptr<FluxTransformer2DModel>> models;
  for (int index = 0; index < shards; ++index) {
    absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>> model =
        LoadFluxTransformer2DModel(
            golden.dir(), std::make_shared<GatheringAttention>(hub, index),
            Placement{});
    ASSERT_TRUE(model.ok()) << model.status();
    models.push_back(*model);
  }
  std::vector<absl::StatusOr<at::Tensor>> outputs(
      shards, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int index = 0; index < shards; ++index) {
    threads.emplace_back([&, index] {
      torch::NoGradGuard thread_no_grad;
      SequenceShard shard{.begin = index * shard_tokens,
                          .tokens = shard_tokens};
      // Masked only where there is padding, as the pipeline does.
      if (padded > joint) {
        shard.key_mask =
            (at::arange(shard.begin, shard.begin + shard_tokens) < joint)
                .expand({2, shard_tokens});
      }
      outputs[index] = models[index]->ForwardShard(inputs, shard);
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<at::Tensor> pieces;
  for (const absl::StatusOr<at::Tensor>& output : outputs) {
    ASSERT_TRUE(output.ok()) << output.status();
    pieces.push_back(*output);
  }
  const at::Tensor gathered = at::cat(pieces, /*dim=*/1);
  ASSERT_EQ(gathered.size(1), padded);
  // Only the float32 summation order differs from the whole forward (row
  // blocks of the matmuls, softmax sums over masked keys): at most 5e-7
  // measured on outputs of magnitude ~2. An unmasked padded key or a wrong
  // position id moves outputs by 1e-2.
  EXPECT_TRUE(AllClose(gathered.narrow(1, text, joint - text), *expected,
                       {.atol = 1e-5, .rtol = 1e-5}));
  // Text tokens and padding have no output.
  EXPECT_EQ(gathered.narrow(1, 0, text).count_nonzero().item<int64_t>(), 0);
  EXPECT_EQ(
      gathered.narrow(1, joint, padded - joint).count_nonzero().item<int64_t>(),
      0);
}

INSTANTIATE_TEST_SUITE_P(
    Splits, FluxShardedForwardTest,
    ::testing::Values(
        // One shard holding the whole sequence and 3 padding tokens.
        ShardSplit{1, 27},
        // No padding; shard 0 is all text, shards 1 and 2 all image.
        ShardSplit{3, 8},
        // Shard 1 holds text and image, shard 4 image and padding.
        ShardSplit{5, 5},
        // Shard 6 is all padding; no shard holds both streams.
        ShardSplit{7, 4}),
    [](const ::testing::TestParamInfo<ShardSplit>& info) {
      return std::to_string(info.param.shards) + "x" +
             std::to_string(info.param.shard_tokens);
    });

// Stands for a sequence-parallel attention whose collective failed.
class LostRankAttention : public models::Attention {
 public:
  at::Tensor Attend(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                    const std::optional<at::Tensor>&) override {
    throw base::StatusError(
        absl::UnavailableError("rank 3 lost during the Ulysses all-to-all"));
  }
};

TEST(FluxShardedForwardErrorsTest, FailedCollectiveKeepsItsStatus) {
  const GoldenCase golden("models/flux_schnell");
  absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>> model =
      LoadFluxTransformer2DModel(
          golden.dir(), std::make_shared<LostRankAttention>(), Placement{});
  ASSERT_TRUE(model.ok()) << model.status();
  torch::NoGradGuard no_grad;
  absl::StatusOr<at::Tensor> sample =
      (*model)->ForwardShard(FluxGoldenInputs(golden, /*guidance=*/false),
                             SequenceShard{.begin = 0, .tokens = 12});
  EXPECT_EQ(sample.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(sample.status().message(), HasSubstr("rank 3 lost"));
}

TEST(FluxShardedForwardErrorsTest, ShardOrKeyMaskThatDoesNotFitIsAnError) {
  const GoldenCase golden("models/flux_schnell");
  std::shared_ptr<FluxTransformer2DModel> model = LoadGoldenModel(golden);
  ASSERT_NE(model, nullptr);
  const FluxTransformerInputs inputs =
      FluxGoldenInputs(golden, /*guidance=*/false);
  absl::StatusOr<at::Tensor> negative =
      model->ForwardShard(inputs, {.begin = -1, .tokens = 12});
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(negative.status().message(),
              HasSubstr("sequence shard begin -1"));
  absl::StatusOr<at::Tensor> wrong_mask = model->ForwardShard(
      inputs, {.begin = 0,
               .tokens = 12,
               .key_mask = at::ones({2, 11}, at::TensorOptions(at::kBool))});
  EXPECT_EQ(wrong_mask.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_mask.status().message(),
              HasSubstr("key_mask has shape [2, 11]; expected [2, 12]"));
}

}  // namespace
}  // namespace ditserve::models
