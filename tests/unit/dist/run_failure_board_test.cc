#include "core/dist/run_failure_board.h"

#include <map>
#include <string>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::dist {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

TEST(RunFailureBoardTest, ReadsWhatRanksPostedForThatRunOnly) {
  RunFailureBoard board(c10::make_intrusive<c10d::HashStore>(),
                        /*world_size=*/4);
  absl::StatusOr<std::map<int, std::string>> before = board.Read(3);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_THAT(*before, IsEmpty());
  EXPECT_EQ(board.Count(3).value_or(-1), 0);

  ASSERT_TRUE(
      board.Post(3, 2, absl::ResourceExhaustedError("out of memory")).ok());
  ASSERT_TRUE(board.Post(3, 0, absl::AbortedError("left")).ok());
  EXPECT_EQ(board.Count(3).value_or(-1), 2);
  absl::StatusOr<std::map<int, std::string>> posted = board.Read(3);
  ASSERT_TRUE(posted.ok()) << posted.status();
  EXPECT_THAT(*posted,
              ElementsAre(Pair(0, "ABORTED: left"),
                          Pair(2, "RESOURCE_EXHAUSTED: out of memory")));
  EXPECT_EQ(DescribePosts(*posted),
            "rank 0: ABORTED: left; rank 2: RESOURCE_EXHAUSTED: out of memory");
  absl::StatusOr<std::map<int, std::string>> next_run = board.Read(4);
  ASSERT_TRUE(next_run.ok()) << next_run.status();
  EXPECT_THAT(*next_run, IsEmpty());
  EXPECT_EQ(board.Count(4).value_or(-1), 0);
}

TEST(RunFailureBoardTest, ForgetDeletesThatRunsPostsOnly) {
  const auto store = c10::make_intrusive<c10d::HashStore>();
  RunFailureBoard board(store, /*world_size=*/4);
  EXPECT_TRUE(board.Forget(3).ok()) << "nothing posted";
  ASSERT_TRUE(board.Post(3, 2, absl::InternalError("a")).ok());
  ASSERT_TRUE(board.Post(3, 0, absl::InternalError("b")).ok());
  ASSERT_TRUE(board.Post(4, 1, absl::InternalError("c")).ok());
  ASSERT_TRUE(board.Forget(3).ok());
  EXPECT_EQ(board.Count(3).value_or(-1), 0);
  EXPECT_THAT(board.Read(3).value(), IsEmpty());
  EXPECT_THAT(board.Read(4).value(), ElementsAre(Pair(1, "INTERNAL: c")));
  EXPECT_EQ(store->getNumKeys(), 3)
      << "run 4's post and count, and the newest run posted";
}

TEST(RunFailureBoardTest, ForgetNewestDeletesWhatForgetLeft) {
  const auto store = c10::make_intrusive<c10d::HashStore>();
  RunFailureBoard board(store, /*world_size=*/2);
  EXPECT_TRUE(board.ForgetNewest().ok()) << "nothing posted";
  ASSERT_TRUE(board.Post(6, 1, absl::InternalError("a")).ok());
  ASSERT_TRUE(board.Post(7, 0, absl::InternalError("b")).ok());
  ASSERT_TRUE(board.ForgetNewest().ok());
  EXPECT_EQ(store->getNumKeys(), 0);
}

}  // namespace
}  // namespace ditserve::dist
