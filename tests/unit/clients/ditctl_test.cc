#include "clients/ditctl/error_messages.h"
#include "clients/ditctl/progress_bar.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::ditctl {
namespace {

using ::testing::HasSubstr;

TEST(ProgressBarTest, FillsInProportionToSteps) {
  EXPECT_EQ(RenderProgress(0, 4, 0.0, 8), "[........] 0/4 steps    0.0 s");
  EXPECT_EQ(RenderProgress(2, 4, 1.25, 8), "[####....] 2/4 steps    1.2 s");
  EXPECT_EQ(RenderProgress(28, 28, 3.0, 4), "[####] 28/28 steps    3.0 s");
}

TEST(ProgressBarTest, ClampsStepsOutsideTheRange) {
  EXPECT_EQ(RenderProgress(9, 4, 0.0, 4), "[####] 4/4 steps    0.0 s");
}

TEST(ErrorMessagesTest, NamesCodeAdviceAndServerMessage) {
  const std::string text = DescribeError(
      grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "queue is full"),
      "host:1");
  EXPECT_THAT(text, HasSubstr("RESOURCE_EXHAUSTED from host:1"));
  EXPECT_THAT(text, HasSubstr("retry later"));
  EXPECT_THAT(text, HasSubstr("Server said: queue is full"));
}

TEST(ErrorMessagesTest, EveryFailureCodeHasSpecificAdvice) {
  for (const grpc::StatusCode code :
       {grpc::StatusCode::INVALID_ARGUMENT, grpc::StatusCode::NOT_FOUND,
        grpc::StatusCode::FAILED_PRECONDITION,
        grpc::StatusCode::RESOURCE_EXHAUSTED, grpc::StatusCode::UNAVAILABLE,
        grpc::StatusCode::DEADLINE_EXCEEDED, grpc::StatusCode::CANCELLED,
        grpc::StatusCode::INTERNAL, grpc::StatusCode::UNIMPLEMENTED}) {
    EXPECT_THAT(DescribeError(grpc::Status(code, "m"), "h"),
                ::testing::Not(HasSubstr("the call failed")))
        << code;
  }
}

}  // namespace
}  // namespace ditserve::ditctl
