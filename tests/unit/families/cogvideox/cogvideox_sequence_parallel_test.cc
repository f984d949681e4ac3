// CogVideoX's sharded forward on thread ranks against the whole forward on
// one rank, through Ring and Ulysses attention. Every case pads: the joint
// sequence [text | video] is cut so that no degree divides it, the shape of
// the field failure this project exists to prevent (sequence-parallel ranks
// that disagreed about the padded joint length).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/families/cogvideox/cogvideox_transformer_3d_model.h"
#include "core/parallel/local_attention.h"
#include "core/parallel/ring_attention.h"
#include "core/parallel/sequence_parallel.h"
#include "core/parallel/ulysses_attention.h"
#include "tests/unit/families/thread_sequence_parallel.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::families {
namespace {

using ::ditserve::testing::AllClose;
using ::ditserve::testing::GoldenCase;
using ::ditserve::testing::RunOnRankThreads;
using ::ditserve::testing::ThreadSequenceParallel;

constexpr std::chrono::milliseconds kTimeout{30000};
// Float32 summation order only (attention merged over shards, matmuls over
// fewer rows); a misplaced shard, a wrong stream's modulation or an
// unmasked padded key moves outputs by 1e-2 or more.
constexpr double kTolerance = 1e-5;

enum class Method { kRing, kUlysses };

struct ShardCase {
  // Golden case under tests/data/golden/models.
  std::string golden;
  Method method = Method::kRing;
  int degree = 2;
  // Text tokens kept of the golden 8 (the RoPE models take any count; the
  // 2b sincos table needs all 8).
  int64_t text_tokens = 8;

  std::string Name() const {
    return absl::StrCat(golden, method == Method::kRing ? "_ring" : "_ulysses",
                        degree, "_text", text_tokens);
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

CogVideoXTransformerInputs CutInputs(const GoldenCase& golden,
                                     int64_t text_tokens) {
  return {.hidden_states = golden.Input("hidden_states"),
          .encoder_hidden_states =
              golden.Input("encoder_hidden_states").narrow(1, 0, text_tokens),
          .timestep = golden.Input("timestep")};
}

absl::StatusOr<std::shared_ptr<CogVideoXTransformer3DModel>> Load(
    const GoldenCase& golden, std::shared_ptr<models::Attention> attention) {
  return LoadCogVideoXTransformer3DModel(golden.dir(), std::move(attention),
                                         models::Placement{});
}

class CogVideoXShardedForwardTest : public ::testing::TestWithParam<ShardCase> {
};

TEST_P(CogVideoXShardedForwardTest, EveryRankGetsTheUnshardedForward) {
  const ShardCase& shard_case = GetParam();
  const GoldenCase golden(absl::StrCat("models/", shard_case.golden));
  const CogVideoXTransformerInputs inputs =
      CutInputs(golden, shard_case.text_tokens);
  torch::NoGradGuard no_grad;
  absl::StatusOr<std::shared_ptr<CogVideoXTransformer3DModel>> whole =
      Load(golden, std::make_shared<parallel::LocalAttention>());
  ASSERT_TRUE(whole.ok()) << whole.status();
  const absl::StatusOr<at::Tensor> expected = (*whole)->Forward(inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  const at::Tensor& latents = inputs.hidden_states;
  absl::StatusOr<VideoTokenGrid> grid = TokenGridOf(
      (*whole)->config(), latents.size(1), latents.size(3), latents.size(4));
  ASSERT_TRUE(grid.ok()) << grid.status();
  const int64_t tokens = shard_case.text_tokens + grid->tokens();
  const std::vector<parallel::SequenceParallel> splits = ThreadSequenceParallel(
      static_cast<int>(tokens), shard_case.degree, latents.size(0),
      (*whole)->config().token_output_channels(), kTimeout);
  ASSERT_EQ(splits.size(), static_cast<size_t>(shard_case.degree));
  ASSERT_NE(splits[0].sharding.padded_tokens(), tokens)
      << "the case must pad the joint sequence";
  std::cout << shard_case.Name() << ": " << tokens << " tokens, padded to "
            << splits[0].sharding.padded_tokens() << "\n";
  const std::vector<absl::StatusOr<at::Tensor>> outputs = RunOnRankThreads(
      shard_case.degree, [&](int rank) -> absl::StatusOr<at::Tensor> {
        ASSIGN_OR_RETURN(
            std::shared_ptr<CogVideoXTransformer3DModel> model,
            Load(golden, AttentionOf(shard_case.method, splits[rank].group)));
        ASSIGN_OR_RETURN(
            at::Tensor gathered,
            parallel::GatherShardedForward(
                splits[rank], latents.size(0), tokens, latents.device(),
                [&](const models::SequenceShard& shard) {
                  return model->ForwardShard(inputs, shard);
                }));
        return model->Unpatchify(gathered.slice(1, shard_case.text_tokens),
                                 *grid);
      });
  for (int rank = 0; rank < shard_case.degree; ++rank) {
    ASSERT_TRUE(outputs[rank].ok()) << outputs[rank].status();
    EXPECT_TRUE(AllClose(*outputs[rank], *expected, {kTolerance, kTolerance}))
        << "rank " << rank << ", max |error| "
        << (*outputs[rank] - *expected).abs().max().item<float>();
  }
}

// Joint lengths: 2b 8 + 12 = 20 (padded by 3 ranks), 5b 7 + 12 = 19 and
// 1.5 5 + 8 = 13 (padded by 2, 3, 4 and 6 ranks). The models have 2 heads,
// so Ulysses runs on 2 ranks; over 4 ranks 1.5's last shard is mostly
// padding, and over 6 (shards of 3, padded to 18) it is padding alone and
// begins past the sequence's end.
INSTANTIATE_TEST_SUITE_P(
    Shards, CogVideoXShardedForwardTest,
    ::testing::Values(ShardCase{"cogvideox_2b", Method::kRing, 3, 8},
                      ShardCase{"cogvideox_5b", Method::kRing, 2, 7},
                      ShardCase{"cogvideox_5b", Method::kUlysses, 2, 7},
                      ShardCase{"cogvideox_5b", Method::kRing, 4, 7},
                      ShardCase{"cogvideox15", Method::kRing, 3, 5},
                      ShardCase{"cogvideox15", Method::kUlysses, 2, 5},
                      ShardCase{"cogvideox15", Method::kRing, 4, 5},
                      ShardCase{"cogvideox15", Method::kRing, 6, 5}),
    [](const ::testing::TestParamInfo<ShardCase>& info) {
      return info.param.Name();
    });

}  // namespace
}  // namespace ditserve::families
