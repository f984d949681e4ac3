#include "core/base/status_macros.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace ditserve::base {
namespace {

absl::Status FailsWith(absl::StatusCode code) {
  return absl::Status(code, "from the callee");
}

absl::StatusOr<std::unique_ptr<int>> MoveOnly(int value, bool ok) {
  if (!ok) return absl::NotFoundError("no value");
  return std::make_unique<int>(value);
}

absl::Status ReturnIfErrorCaller(absl::StatusCode code, bool* reached_end) {
  RETURN_IF_ERROR(FailsWith(code));
  *reached_end = true;
  return absl::OkStatus();
}

absl::StatusOr<int> AssignOrReturnCaller(bool first_ok, bool second_ok) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> first, MoveOnly(1, first_ok));
  ASSIGN_OR_RETURN(auto second, MoveOnly(2, second_ok));
  return *first + *second;
}

TEST(StatusMacrosTest, ReturnIfErrorReturnsTheCalleeStatusUnchanged) {
  bool reached_end = false;
  const absl::Status status =
      ReturnIfErrorCaller(absl::StatusCode::kUnavailable, &reached_end);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "from the callee");
  EXPECT_FALSE(reached_end);
}

TEST(StatusMacrosTest, ReturnIfErrorGoesOnWhenOk) {
  bool reached_end = false;
  EXPECT_TRUE(ReturnIfErrorCaller(absl::StatusCode::kOk, &reached_end).ok());
  EXPECT_TRUE(reached_end);
}

TEST(StatusMacrosTest, AssignOrReturnMovesValuesAndStopsAtTheFirstError) {
  absl::StatusOr<int> both = AssignOrReturnCaller(true, true);
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(*both, 3);
  absl::StatusOr<int> second = AssignOrReturnCaller(true, false);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(second.status().message(), "no value");
}

}  // namespace
}  // namespace ditserve::base
