// The parallel forwards of SD3 and PixArt (BindSD3Forward, BindPixArtForward)
// on thread ranks against the whole forward on one rank: sequence shards
// through Ring and Ulysses attention, every case padded; PipeFusion over two
// stages, whole and patched, alone and with each stage's forwards split over
// sequence-parallel ranks.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/families/pixart/pixart_family.h"
#include "core/families/sd3/sd3_family.h"
#include "core/models/block_range.h"
#include "core/parallel/local_attention.h"
#include "core/parallel/ring_attention.h"
#include "core/parallel/ulysses_attention.h"
#include "tests/unit/families/thread_sequence_parallel.h"
#include "tests/unit/models/cfg_golden_inputs.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::families {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::PixArtGoldenInputs;
using ::ditserve::testing::PixArtGoldenMicroConditions;
using ::ditserve::testing::RunOnRankThreads;
using ::ditserve::testing::SD3GoldenInputs;
using ::ditserve::testing::SplitShapes;
using ::ditserve::testing::ThreadPipeFusion;
using ::ditserve::testing::ThreadSequenceParallel;
using ::ditserve::testing::ThreadStage;
using ::testing::HasSubstr;

constexpr std::chrono::milliseconds kTimeout{30000};
// Float32 summation order only: attention over shards merged by all-to-all
// or log-sum-exp, and matmuls over fewer rows. A misplaced shard, an
// unmasked padded key or a text key in SD3.5's image-only attention moves
// outputs by 1e-2 or more.
constexpr double kTolerance = 1e-5;
// The golden inputs are cut so that no degree above 1 divides the sequence
// and every case pads. SD3: 16 image tokens and 7 of the 8 text tokens.
constexpr int64_t kSD3TextTokens = 7;
constexpr int kSD3SequenceTokens = 16 + kSD3TextTokens;
// PixArt: the top-left 6x6 of the 8x8 latents, 3x3 image tokens (with
// patch_size 2); over 4 ranks the last shard is all padding.
constexpr int64_t kPixArtLatentSide = 6;
constexpr int kPixArtSequenceTokens = 9;

enum class Method { kRing, kUlysses };

struct ShardCase {
  // Golden case under tests/data/golden/models.
  std::string golden;
  Method method = Method::kRing;
  int degree = 2;

  std::string Name() const {
    return absl::StrCat(golden, method == Method::kRing ? "_ring" : "_ulysses",
                        degree);
  }
};

void PrintTo(const ShardCase& shard_case, std::ostream* out) {
  *out << shard_case.Name();
}

std::shared_ptr<models::Attention> AttentionOf(Method method,
                                               const parallel::Group& group) {
  if (method == Method::kRing) {
    return std::make_shared<parallel::RingAttention>(group);
  }
  return std::make_shared<parallel::UlyssesAttention>(
      group, std::make_unique<parallel::LocalAttention>());
}

bool IsSD3(const ShardCase& shard_case) {
  return shard_case.golden.rfind("sd3", 0) == 0;
}

// How GoldenForward splits the forward; the default is the whole forward on
// one rank.
struct Split {
  // This rank's shard, gathered.
  const parallel::SequenceParallel* sequence_parallel = nullptr;
  // This rank's PipeFusion stage (holding `blocks`) at denoising step
  // `step`.
  const parallel::PipeFusionStages* stages = nullptr;
  std::optional<models::BlockRange> blocks;
  int step = 0;
};

absl::StatusOr<at::Tensor> SplitForward(families::BoundForward& forward,
                                        const Split& split) {
  if (split.sequence_parallel != nullptr) {
    return forward.Sharded(*split.sequence_parallel);
  }
  if (split.stages != nullptr) return forward.Staged(*split.stages, split.step);
  return forward.Whole();
}

// The family's forward of the golden inputs, split as `split` says.
absl::StatusOr<at::Tensor> GoldenForward(
    const GoldenCase& golden, bool sd3,
    std::shared_ptr<models::Attention> attention, const Split& split) {
  if (sd3) {
    absl::StatusOr<std::shared_ptr<models::SD3Transformer2DModel>> model =
        models::LoadSD3Transformer2DModel(golden.dir(), std::move(attention),
                                          models::Placement{}, split.blocks);
    if (!model.ok()) return model.status();
    models::SD3TransformerInputs inputs = SD3GoldenInputs(golden);
    inputs.encoder_hidden_states =
        inputs.encoder_hidden_states.narrow(1, 0, kSD3TextTokens);
    return SplitForward(*families::BindSD3Forward(**model, inputs), split);
  }
  absl::StatusOr<std::shared_ptr<models::PixArtTransformer2DModel>> model =
      models::LoadPixArtTransformer2DModel(golden.dir(), std::move(attention),
                                           models::Placement{}, split.blocks);
  if (!model.ok()) return model.status();
  models::PixArtTransformerInputs inputs = PixArtGoldenInputs(golden);
  inputs.hidden_states = inputs.hidden_states.narrow(2, 0, kPixArtLatentSide)
                             .narrow(3, 0, kPixArtLatentSide);
  if ((*model)->config().use_additional_conditions) {
    inputs.micro_conditions = PixArtGoldenMicroConditions(golden);
  }
  return SplitForward(*families::BindPixArtForward(**model, inputs), split);
}

class CfgShardedForwardTest : public ::testing::TestWithParam<ShardCase> {};

TEST_P(CfgShardedForwardTest, EveryRankGetsTheUnshardedForward) {
  const ShardCase& shard_case = GetParam();
  const GoldenCase golden(absl::StrCat("models/", shard_case.golden));
  const bool sd3 = IsSD3(shard_case);
  torch::NoGradGuard no_grad;
  const absl::StatusOr<at::Tensor> expected = GoldenForward(
      golden, sd3, std::make_shared<parallel::LocalAttention>(), {});
  ASSERT_TRUE(expected.ok()) << expected.status();

  const int tokens = sd3 ? kSD3SequenceTokens : kPixArtSequenceTokens;
  const int64_t batch = expected->size(0);
  // The unpatchified output holds every image token's channels.
  const int64_t image_tokens = sd3 ? tokens - kSD3TextTokens : tokens;
  const std::vector<parallel::SequenceParallel> splits = ThreadSequenceParallel(
      tokens, shard_case.degree, batch,
      expected->numel() / (batch * image_tokens), kTimeout);
  ASSERT_EQ(splits.size(), static_cast<size_t>(shard_case.degree));
  std::cout << shard_case.Name() << ": " << tokens << " tokens, padded to "
            << splits[0].sharding.padded_tokens() << "\n";
  const std::vector<absl::StatusOr<at::Tensor>> outputs =
      RunOnRankThreads(shard_case.degree, [&](int rank) {
        return GoldenForward(golden, sd3,
                             AttentionOf(shard_case.method, splits[rank].group),
                             {.sequence_parallel = &splits[rank]});
      });
  for (int rank = 0; rank < shard_case.degree; ++rank) {
    ASSERT_TRUE(outputs[rank].ok()) << outputs[rank].status();
    EXPECT_TRUE(AllClose(*outputs[rank], *expected, {kTolerance, kTolerance}))
        << "rank " << rank << ", max |error| "
        << (*outputs[rank] - *expected).abs().max().item<float>();
  }
}

// sd35 has SD3.5's qk_norm and a dual-attention block (image-only attn2, so
// text keys are masked there too). Ulysses needs heads % degree == 0: sd35
// has 4 heads, pixart_sigma 2.
INSTANTIATE_TEST_SUITE_P(
    Shards, CfgShardedForwardTest,
    ::testing::Values(ShardCase{"sd3", Method::kRing, 2},
                      ShardCase{"sd3", Method::kRing, 5},
                      ShardCase{"sd35", Method::kRing, 3},
                      ShardCase{"sd35", Method::kUlysses, 2},
                      ShardCase{"sd35", Method::kUlysses, 4},
                      ShardCase{"pixart_sigma", Method::kRing, 2},
                      ShardCase{"pixart_sigma", Method::kUlysses, 2},
                      ShardCase{"pixart_alpha", Method::kRing, 4}),
    [](const ::testing::TestParamInfo<ShardCase>& info) {
      return info.param.Name();
    });

struct StagesCase {
  // Golden case under tests/data/golden/models.
  std::string golden;
  // Sequence-parallel ranks per stage, sharing keys and values over a ring
  // or by Ulysses head exchange.
  int sp = 1;
  Method method = Method::kRing;

  std::string Name() const {
    if (sp == 1) return golden;
    return absl::StrCat(golden, method == Method::kRing ? "_ring" : "_ulysses",
                        sp);
  }
};

void PrintTo(const StagesCase& stages_case, std::ostream* out) {
  *out << stages_case.Name();
}

class CfgPipeFusionForwardTest : public ::testing::TestWithParam<StagesCase> {};

// Two stages of one block each (every golden has two); step 0 runs the whole
// sequence stage after stage, step 1 the patch pipeline, here with the same
// inputs, so the cached keys and values of the other patches are fresh.
TEST_P(CfgPipeFusionForwardTest, StagesGiveTheWholeForward) {
  const StagesCase& stages_case = GetParam();
  const GoldenCase golden(absl::StrCat("models/", stages_case.golden));
  const bool sd3 = stages_case.golden.rfind("sd3", 0) == 0;
  torch::NoGradGuard no_grad;
  const absl::StatusOr<at::Tensor> expected = GoldenForward(
      golden, sd3, std::make_shared<parallel::LocalAttention>(), {});
  ASSERT_TRUE(expected.ok()) << expected.status();

  constexpr int kStages = 2;
  const int sp = stages_case.sp;
  // Patches of one patch row and the rest: SD3's 4×4 grid, PixArt's 3×3.
  const std::vector<ThreadStage> ranks = ThreadPipeFusion(
      kStages, sp, stages_case.method == Method::kUlysses,
      sd3 ? std::vector<int64_t>{0, 4, 16} : std::vector<int64_t>{0, 3, 9},
      kTimeout);
  for (const int step : {0, 1}) {
    const std::vector<absl::StatusOr<at::Tensor>> outputs =
        RunOnRankThreads(kStages * sp, [&](int rank) {
          const int stage = rank / sp;
          return GoldenForward(golden, sd3, ranks[rank].attention,
                               {.stages = &ranks[rank].stages,
                                .blocks = models::BlockRange{stage, stage + 1},
                                .step = step});
        });
    for (int rank = 0; rank < kStages * sp; ++rank) {
      ASSERT_TRUE(outputs[rank].ok()) << outputs[rank].status();
      if (step == 0 && sp == 1) {
        // The same operations in the same order: bit-identical.
        EXPECT_TRUE(outputs[rank]->equal(*expected)) << "rank " << rank;
      } else {
        // Matmuls over fewer rows: float32 ulps.
        EXPECT_TRUE(
            AllClose(*outputs[rank], *expected, {kTolerance, kTolerance}))
            << "step " << step << ", rank " << rank << ", max |error| "
            << (*outputs[rank] - *expected).abs().max().item<float>();
      }
    }
  }
}

// sd35 has a dual-attention block, whose image-only attn2 caches keys of the
// image tokens alone. With sequence parallelism PixArt's 9 image tokens
// split into shares of 5 ([0, 5) and [4, 9)) and its first patch's 3 into
// shares of 2, so neighbours compute a token twice; sd35 ring 3 gives its
// first patch's 4 tokens to three ranks in shares of 2, the last owning none.
// Ulysses needs heads % sp == 0: sd35 has 4 heads, pixart_sigma 2.
INSTANTIATE_TEST_SUITE_P(
    Goldens, CfgPipeFusionForwardTest,
    ::testing::Values(StagesCase{"sd3"}, StagesCase{"sd35"},
                      StagesCase{"pixart_sigma"}, StagesCase{"pixart_alpha"},
                      StagesCase{"sd3", 2, Method::kRing},
                      StagesCase{"sd35", 3, Method::kRing},
                      StagesCase{"sd35", 2, Method::kUlysses},
                      StagesCase{"pixart_sigma", 2, Method::kUlysses},
                      StagesCase{"pixart_alpha", 2, Method::kRing}),
    [](const ::testing::TestParamInfo<StagesCase>& info) {
      return info.param.Name();
    });

TEST(CfgShardedForwardErrorsTest, SplitOfAnotherSequenceLengthIsAnError) {
  const GoldenCase golden("models/pixart_sigma");
  absl::StatusOr<std::shared_ptr<models::PixArtTransformer2DModel>> model =
      models::LoadPixArtTransformer2DModel(
          golden.dir(), std::make_shared<parallel::LocalAttention>(),
          models::Placement{});
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<parallel::SequenceSharding> sharding =
      parallel::SequenceSharding::Create(SplitShapes(30, 2), 2, 0);
  ASSERT_TRUE(sharding.ok()) << sharding.status();
  absl::StatusOr<at::Tensor> output =
      families::BindPixArtForward(**model, PixArtGoldenInputs(golden))
          ->Sharded({.sharding = *sharding, .group = {}});
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(output.status().message(),
              HasSubstr("attention sequence has 16 tokens; the "
                        "sequence-parallel split (shapes.sequence_tokens) is "
                        "for 30"));
}

TEST(PixArtStageTest, StageArgumentsThatDoNotFitAreErrors) {
  const GoldenCase golden("models/pixart_sigma");
  const models::PixArtTransformerInputs inputs = PixArtGoldenInputs(golden);
  torch::NoGradGuard no_grad;
  const auto load = [&](models::BlockRange blocks) {
    absl::StatusOr<std::shared_ptr<models::PixArtTransformer2DModel>> model =
        models::LoadPixArtTransformer2DModel(
            golden.dir(), std::make_shared<parallel::LocalAttention>(),
            models::Placement{}, blocks);
    EXPECT_TRUE(model.ok()) << model.status();
    return model.ok() ? *model : nullptr;
  };
  std::shared_ptr<models::PixArtTransformer2DModel> first = load({0, 1});
  std::shared_ptr<models::PixArtTransformer2DModel> second = load({1, 2});
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->Forward(inputs).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(first->StageOutput(inputs, at::zeros({2, 16, 48}))
                              .status()
                              .message()),
              HasSubstr("only the last PipeFusion stage projects the output"));
  EXPECT_THAT(std::string(second->ForwardStage(inputs, {0, 16}, std::nullopt)
                              .status()
                              .message()),
              HasSubstr("needs the previous stage's streams"));
  EXPECT_THAT(std::string(first->ForwardStage(inputs, {12, 8}, std::nullopt)
                              .status()
                              .message()),
              HasSubstr("image tokens [12, 20) are not a part of "
                        "the 16 image tokens"));
  EXPECT_EQ(second->ForwardStage(inputs, {0, 16}, at::zeros({2, 15, 48}))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(models::LoadPixArtTransformer2DModel(
                golden.dir(), std::make_shared<parallel::LocalAttention>(),
                models::Placement{}, models::BlockRange{1, 3})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ditserve::families
