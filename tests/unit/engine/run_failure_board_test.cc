#include "core/engine/run_failure_board.h"

#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace ditserve::engine {
namespace {

std::optional<std::string> ReadAnyOrDie(const RunFailureBoard& board) {
  absl::StatusOr<std::optional<std::string>> posted = board.ReadAny();
  EXPECT_TRUE(posted.ok()) << posted.status();
  return posted.ok() ? *posted : std::nullopt;
}

// Ranks 2 and 3 share a store, as the ranks of one generation do.
TEST(RunFailureBoardTest, EachRankReadsThePostsOfTheRunInProgressOnly) {
  const auto store = c10::make_intrusive<c10d::HashStore>();
  RunFailureBoard rank_2(store, 2);
  RunFailureBoard rank_3(store, 3);
  rank_2.BeginNextRun();
  rank_3.BeginNextRun();
  EXPECT_EQ(ReadAnyOrDie(rank_2), std::nullopt);
  EXPECT_EQ(rank_2.FailedAmong({2, 3}), std::nullopt);

  ASSERT_TRUE(rank_3.Post(absl::ResourceExhaustedError("out of memory")).ok());
  const std::string posted = "rank 3: RESOURCE_EXHAUSTED: out of memory";
  EXPECT_EQ(ReadAnyOrDie(rank_2), posted);
  EXPECT_EQ(rank_2.FailedAmong({2, 3}), posted);
  // Only the ranks asked about count, and never the asking one.
  EXPECT_EQ(rank_2.FailedAmong({0, 2}), std::nullopt);
  EXPECT_EQ(rank_3.FailedAmong({2, 3}), std::nullopt);

  rank_2.BeginNextRun();
  EXPECT_EQ(ReadAnyOrDie(rank_2), std::nullopt);
  EXPECT_EQ(rank_2.FailedAmong({2, 3}), std::nullopt);
}

}  // namespace
}  // namespace ditserve::engine
