#include "core/engine/dp_failure_board.h"

#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace ditserve::engine {
namespace {

TEST(DpFailureBoardTest, ReadsWhatARankPostedForThatRunOnly) {
  DpFailureBoard board(c10::make_intrusive<c10d::HashStore>());
  absl::StatusOr<std::optional<std::string>> before = board.Read(3);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(*before, std::nullopt);

  ASSERT_TRUE(
      board.Post(3, 2, absl::ResourceExhaustedError("out of memory")).ok());
  absl::StatusOr<std::optional<std::string>> posted = board.Read(3);
  ASSERT_TRUE(posted.ok()) << posted.status();
  EXPECT_EQ(*posted, "rank 2: RESOURCE_EXHAUSTED: out of memory");
  absl::StatusOr<std::optional<std::string>> next_run = board.Read(4);
  ASSERT_TRUE(next_run.ok()) << next_run.status();
  EXPECT_EQ(*next_run, std::nullopt);
}

}  // namespace
}  // namespace ditserve::engine
