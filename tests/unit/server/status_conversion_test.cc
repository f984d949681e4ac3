#include "server/status_conversion.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "core/config/field_error.h"
#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"

namespace ditserve::server {
namespace {

TEST(ToGrpcStatusTest, AFieldRefusalCarriesABadRequestNamingEachField) {
  const std::string message =
      "height × width 2048 × 2064 = 4227072 pixels exceeds the limit of "
      "4194304";
  const grpc::Status status = ToGrpcStatus(config::WithFields(
      absl::InvalidArgumentError(message), {"height", "width"}));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), message);
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(status.error_details()));
  EXPECT_EQ(details.code(), 3);
  EXPECT_EQ(details.message(), message);
  ASSERT_EQ(details.details_size(), 1);
  // The type URL googleapis' clients look the detail up by.
  EXPECT_EQ(details.details(0).type_url(),
            "type.googleapis.com/google.rpc.BadRequest");
  google::rpc::BadRequest bad_request;
  ASSERT_TRUE(details.details(0).UnpackTo(&bad_request));
  ASSERT_EQ(bad_request.field_violations_size(), 2);
  EXPECT_EQ(bad_request.field_violations(0).field(), "height");
  EXPECT_EQ(bad_request.field_violations(1).field(), "width");
  EXPECT_EQ(bad_request.field_violations(1).description(), message);
}

TEST(ToGrpcStatusTest, OtherStatusesKeepCodeAndMessageOnly) {
  const grpc::Status status =
      ToGrpcStatus(absl::UnavailableError("rank 1 was lost"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(), "rank 1 was lost");
  EXPECT_TRUE(status.error_details().empty());
}

constexpr char kOutOfMemory[] =
    "generating the dp group's prompts: CUDA out of memory. Tried to "
    "allocate 2.00 GiB";

TEST(RunFailureTest, ARequestThatRanShortAloneIsNotToBeRetried) {
  absl::Status status = absl::ResourceExhaustedError(kOutOfMemory);
  status.SetPayload("type.example/kept", absl::Cord("detail"));

  const absl::Status told = RunFailure(status, 1);

  EXPECT_EQ(told.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(IsNotRetryable(told));
  EXPECT_THAT(std::string(told.message()),
              ::testing::StartsWith(std::string(kOutOfMemory) +
                                    "; the request ran alone and would "
                                    "likely run short again: ask for fewer "
                                    "or smaller outputs"));
  EXPECT_EQ(told.GetPayload("type.example/kept"), absl::Cord("detail"));
}

TEST(RunFailureTest, ABatchedRequestMayFitAloneAndStaysRetryable) {
  const absl::Status status = absl::ResourceExhaustedError(kOutOfMemory);
  const absl::Status told = RunFailure(status, 2);
  EXPECT_EQ(told, status);
  EXPECT_FALSE(IsNotRetryable(told));
}

TEST(RunFailureTest, OtherFailuresOfALoneRequestAreKept) {
  for (const absl::Status& status :
       {absl::UnavailableError("rank 1 left the group"),
        absl::InternalError("a bug"),
        absl::DeadlineExceededError("after step 3 of 28")}) {
    const absl::Status told = RunFailure(status, 1);
    EXPECT_EQ(told, status);
    EXPECT_FALSE(IsNotRetryable(told));
  }
}

}  // namespace
}  // namespace ditserve::server
