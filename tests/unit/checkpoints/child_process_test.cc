#include "core/checkpoints/child_process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "absl/time/clock.h"

namespace ditserve::checkpoints {
namespace {

using ::testing::HasSubstr;

class ChildProcessTest : public ::testing::Test {
 protected:
  std::string Dir() const { return ::testing::TempDir(); }
  std::string Log() const {
    return (std::filesystem::path(::testing::TempDir()) /
            ("child_process_test_" +
             std::string(::testing::UnitTest::GetInstance()
                             ->current_test_info()
                             ->name()) +
             ".log"))
        .string();
  }
};

TEST_F(ChildProcessTest, ZeroExitIsOkAndRunsInTheWorkingDir) {
  EXPECT_TRUE(RunChildProcess({"sh", "-c", "touch ran_here"}, Dir(), Log(),
                              absl::Seconds(30))
                  .ok());
  EXPECT_TRUE(
      std::filesystem::exists(std::filesystem::path(Dir()) / "ran_here"));
}

TEST_F(ChildProcessTest, NonZeroExitIsInternalWithTheOutput) {
  const absl::Status status =
      RunChildProcess({"sh", "-c", "echo corpus too small >&2; exit 3"}, Dir(),
                      Log(), absl::Seconds(30));
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("exited with status 3"));
  EXPECT_THAT(status.message(), HasSubstr("corpus too small"));
}

TEST_F(ChildProcessTest, MissingProgramIsNotFound) {
  const absl::Status status = RunChildProcess({"ditserve-no-such-program"},
                                              Dir(), Log(), absl::Seconds(30));
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("ditserve-no-such-program"));
}

TEST_F(ChildProcessTest, OverrunningProgramIsKilledAtTheTimeout) {
  const absl::Time start = absl::Now();
  const absl::Status status =
      RunChildProcess({"sleep", "30"}, Dir(), Log(), absl::Milliseconds(200));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

}  // namespace
}  // namespace ditserve::checkpoints
