#include "tests/unit/pipelines/thread_sequence_parallel.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <thread>

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

std::vector<pipelines::SequenceParallel> ThreadSequenceParallel(
    int tokens, int degree, std::chrono::milliseconds wait) {
  const v1::DerivedShapes shapes = SplitShapes(tokens, degree);
  const std::vector<parallel::Group> groups =
      ThreadRankGroups("sp", degree, wait);
  std::vector<pipelines::SequenceParallel> ranks;
  for (int rank = 0; rank < degree; ++rank) {
    absl::StatusOr<parallel::SequenceSharding> sharding =
        parallel::SequenceSharding::Create(shapes, degree, rank);
    EXPECT_TRUE(sharding.ok()) << sharding.status();
    if (!sharding.ok()) return {};
    ranks.push_back({.sharding = *sharding, .group = groups[rank]});
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
