// ShardedSD3Forward and ShardedPixArtForward on thread ranks against the
// whole forward on one rank, through Ring and Ulysses attention, with and
// without padding.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/parallel/local_attention.h"
#include "core/parallel/ring_attention.h"
#include "core/parallel/ulysses_attention.h"
#include "core/pipelines/pixart/pixart_pipeline.h"
#include "core/pipelines/sd3/sd3_pipeline.h"
#include "tests/unit/models/golden_case.h"
#include "tests/unit/models/guided_golden_inputs.h"
#include "tests/unit/pipelines/thread_sequence_parallel.h"

namespace ditserve::pipelines {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::PixArtGoldenInputs;
using ::ditserve::testing::PixArtGoldenMicroConditions;
using ::ditserve::testing::RunOnRankThreads;
using ::ditserve::testing::SD3GoldenInputs;
using ::ditserve::testing::SplitShapes;
using ::ditserve::testing::ThreadSequenceParallel;
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

std::shared_ptr<parallel::Attention> AttentionOf(Method method,
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

// The family's forward of the golden inputs: whole on one rank when
// `sequence_parallel` is null, else this rank's shard, gathered.
absl::StatusOr<at::Tensor> GoldenForward(
    const GoldenCase& golden, bool sd3,
    std::shared_ptr<parallel::Attention> attention,
    const SequenceParallel* sequence_parallel) {
  if (sd3) {
    absl::StatusOr<std::shared_ptr<models::SD3Transformer2DModel>> model =
        models::LoadSD3Transformer2DModel(golden.dir(), std::move(attention),
                                          models::Placement{});
    if (!model.ok()) return model.status();
    models::SD3TransformerInputs inputs = SD3GoldenInputs(golden);
    inputs.encoder_hidden_states =
        inputs.encoder_hidden_states.narrow(1, 0, kSD3TextTokens);
    return sequence_parallel == nullptr
               ? (*model)->Forward(inputs)
               : ShardedSD3Forward(**model, inputs, *sequence_parallel);
  }
  absl::StatusOr<std::shared_ptr<models::PixArtTransformer2DModel>> model =
      models::LoadPixArtTransformer2DModel(golden.dir(), std::move(attention),
                                           models::Placement{});
  if (!model.ok()) return model.status();
  models::PixArtTransformerInputs inputs = PixArtGoldenInputs(golden);
  inputs.hidden_states = inputs.hidden_states.narrow(2, 0, kPixArtLatentSide)
                             .narrow(3, 0, kPixArtLatentSide);
  if ((*model)->config().use_additional_conditions) {
    inputs.micro_conditions = PixArtGoldenMicroConditions(golden);
  }
  return sequence_parallel == nullptr
             ? (*model)->Forward(inputs)
             : ShardedPixArtForward(**model, inputs, *sequence_parallel);
}

class GuidedShardedForwardTest : public ::testing::TestWithParam<ShardCase> {};

TEST_P(GuidedShardedForwardTest, EveryRankGetsTheUnshardedForward) {
  const ShardCase& shard_case = GetParam();
  const GoldenCase golden(absl::StrCat("models/", shard_case.golden));
  const bool sd3 = IsSD3(shard_case);
  torch::NoGradGuard no_grad;
  const absl::StatusOr<at::Tensor> expected = GoldenForward(
      golden, sd3, std::make_shared<parallel::LocalAttention>(), nullptr);
  ASSERT_TRUE(expected.ok()) << expected.status();

  const int tokens = sd3 ? kSD3SequenceTokens : kPixArtSequenceTokens;
  const std::vector<SequenceParallel> splits =
      ThreadSequenceParallel(tokens, shard_case.degree, kTimeout);
  ASSERT_EQ(splits.size(), static_cast<size_t>(shard_case.degree));
  std::cout << shard_case.Name() << ": " << tokens << " tokens, padded to "
            << splits[0].sharding.padded_tokens() << "\n";
  const std::vector<absl::StatusOr<at::Tensor>> outputs =
      RunOnRankThreads(shard_case.degree, [&](int rank) {
        return GoldenForward(golden, sd3,
                             AttentionOf(shard_case.method, splits[rank].group),
                             &splits[rank]);
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
    Shards, GuidedShardedForwardTest,
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

TEST(GuidedShardedForwardErrorsTest, SplitOfAnotherSequenceLengthIsAnError) {
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
      ShardedPixArtForward(**model, PixArtGoldenInputs(golden),
                           {.sharding = *sharding, .group = {}});
  EXPECT_EQ(output.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(output.status().message(),
              HasSubstr("attention sequence has 16 tokens; the "
                        "sequence-parallel split (shapes.sequence_tokens) is "
                        "for 30"));
}

}  // namespace
}  // namespace ditserve::pipelines
