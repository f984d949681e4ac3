#include "core/dist/collective.h"

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::dist {
namespace {

using ::testing::HasSubstr;

// A collective that completed at once.
class CompletedWork : public c10d::Work {
 public:
  CompletedWork() { finish(); }
};

CollectiveContext Context(std::vector<int> lost) {
  return {.group_name = "control",
          .timeout = std::chrono::milliseconds(100),
          .find_lost_ranks = [lost] { return lost; }};
}

TEST(CollectiveTest, CompletedWorkIsOk) {
  EXPECT_TRUE(RunCollective("broadcast", Context({}), [] {
                return c10::make_intrusive<CompletedWork>();
              }).ok());
}

TEST(CollectiveTest, WorkThatNeverCompletesTimesOutWithDeadlineExceeded) {
  absl::Status status = RunCollective("broadcast", Context({}), [] {
    return c10::make_intrusive<c10d::Work>();
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("broadcast on the control group did not complete "
                        "within 100 ms"));
}

TEST(CollectiveTest, FailureWithALostRankIsUnavailableNamingTheRank) {
  absl::Status status = RunCollective(
      "all-gather", Context({2}), []() -> c10::intrusive_ptr<c10d::Work> {
        throw std::runtime_error("Connection closed by peer");
      });
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("rank 2 lost during all-gather on the control group: "
                        "Connection closed by peer"));
}

TEST(CollectiveTest, SeveralLostRanksAreAllNamed) {
  absl::Status status = RunCollective("all-gather", Context({1, 3}), [] {
    return c10::make_intrusive<c10d::Work>();
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()), HasSubstr("ranks 1, 3 lost"));
}

TEST(CollectiveTest, OtherFailureWithEveryRankAliveIsInternal) {
  absl::Status status = RunCollective(
      "gather", Context({}), []() -> c10::intrusive_ptr<c10d::Work> {
        throw std::runtime_error("tensor size mismatch");
      });
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("gather on the control group failed: tensor size "
                        "mismatch"));
}

}  // namespace
}  // namespace ditserve::dist
