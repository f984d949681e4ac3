#include "tests/unit/families/thread_sequence_parallel.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/parallel/make_attention.h"
#include "core/parallel/sequence_sharding.h"
#include "tests/unit/parallel/thread_rank_groups.h"

namespace ditserve::testing {

v1::DerivedShapes SplitShapes(int tokens, int degree) {
  const int shard = (tokens + degree - 1) / degree;
  v1::DerivedShapes shapes;
  shapes.set_sequence_tokens(tokens);
  shapes.set_padded_sequence_tokens(shard * degree);
  shapes.set_sequence_padding_tokens(shard * degree - tokens);
  shapes.set_shard_tokens(shard);
  return shapes;
}

std::vector<parallel::SequenceParallel> ThreadSequenceParallel(
    int tokens, int degree, int64_t rows, int64_t channels,
    std::chrono::milliseconds wait) {
  const v1::DerivedShapes shapes = SplitShapes(tokens, degree);
  const std::vector<parallel::Group> groups =
      ThreadRankGroups("sp", degree, wait);
  std::vector<parallel::SequenceParallel> ranks;
  for (int rank = 0; rank < degree; ++rank) {
    absl::StatusOr<parallel::SequenceSharding> sharding =
        parallel::SequenceSharding::Create(shapes, degree, rank);
    EXPECT_TRUE(sharding.ok()) << sharding.status();
    if (!sharding.ok()) return {};
    ranks.push_back({.sharding = *sharding,
                     .group = groups[rank],
                     .gathered = at::zeros(
                         {degree, rows, sharding->shard_tokens(), channels})});
  }
  return ranks;
}

std::vector<ThreadStage> ThreadPipeFusion(int stages, int sp, bool ulysses,
                                          std::vector<int64_t> patch_offsets,
                                          std::chrono::milliseconds wait) {
  // pp_groups[i]: the stages of sp index i, feedback_groups[i] the same
  // ranks again; sp_groups[s]: stage s's ranks.
  std::vector<std::vector<parallel::Group>> pp_groups;
  std::vector<std::vector<parallel::Group>> feedback_groups;
  std::vector<std::vector<parallel::Group>> sp_groups;
  for (int index = 0; index < sp; ++index) {
    pp_groups.push_back(
        ThreadRankGroups(absl::StrCat("pp", index), stages, wait));
    feedback_groups.push_back(
        ThreadRankGroups(absl::StrCat("pp", index, "/feedback"), stages, wait));
  }
  for (int stage = 0; stage < stages; ++stage) {
    sp_groups.push_back(ThreadRankGroups(absl::StrCat("sp", stage), sp, wait));
  }
  std::vector<ThreadStage> ranks;
  for (int stage = 0; stage < stages; ++stage) {
    for (int index = 0; index < sp; ++index) {
      const parallel::Group& sp_group = sp_groups[stage][index];
      std::optional<parallel::Group> shared;
      if (sp > 1) shared = sp_group;
      const parallel::PipeFusionAttention attention =
          ulysses ? parallel::MakePipeFusionAttention(std::nullopt, shared)
                  : parallel::MakePipeFusionAttention(shared, std::nullopt);
      ThreadStage rank;
      rank.stages = {
          .group = pp_groups[index][stage],
          .feedback = feedback_groups[index][stage],
          .receive_buffer = [](parallel::StageTensor, int,
                               const std::vector<int64_t>& shape)
              -> absl::StatusOr<at::Tensor> { return at::zeros(shape); },
          .stale_kv = attention.stale_kv,
          .warmup_steps = 1,
          .patch_offsets = patch_offsets};
      if (sp > 1) rank.stages.sp = sp_group;
      rank.attention = attention.attention;
      ranks.push_back(std::move(rank));
    }
  }
  return ranks;
}

std::vector<absl::StatusOr<at::Tensor>> RunOnRankThreads(
    int ranks, const std::function<absl::StatusOr<at::Tensor>(int)>& forward) {
  std::vector<absl::StatusOr<at::Tensor>> outputs(
      ranks, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      torch::NoGradGuard no_grad;
      outputs[rank] = forward(rank);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return outputs;
}

}  // namespace ditserve::testing
