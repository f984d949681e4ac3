#include "core/dist/control_frame.h"

#include <string>

#include "absl/status/status.h"
#include "core/config/config_digest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::dist {
namespace {

using ::testing::HasSubstr;

TEST(CheckControlFrameHeaderTest, AcceptsKnownKindsWithinTheLimit) {
  EXPECT_TRUE(CheckControlFrameHeader(v1::CONTROL_KIND_RUN, 0, 10).ok());
  EXPECT_TRUE(CheckControlFrameHeader(v1::CONTROL_KIND_PING, 10, 10).ok());
  EXPECT_TRUE(CheckControlFrameHeader(v1::CONTROL_KIND_SHUTDOWN, 1, 10).ok());
}

TEST(CheckControlFrameHeaderTest, RefusesUnknownKindsAndBadLengths) {
  absl::Status unknown = CheckControlFrameHeader(7, 3, 10);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(unknown.message(), HasSubstr("unknown kind 7 (length 3)"));
  EXPECT_FALSE(
      CheckControlFrameHeader(v1::CONTROL_KIND_UNSPECIFIED, 0, 10).ok());
  absl::Status negative =
      CheckControlFrameHeader(v1::CONTROL_KIND_PING, -1, 10);
  EXPECT_THAT(negative.message(),
              HasSubstr("Ping announces -1 bytes; expected 0..10"));
  EXPECT_FALSE(CheckControlFrameHeader(v1::CONTROL_KIND_RUN, 11, 10).ok());
}

TEST(DecodeControlPayloadTest, ParsesAndDigestsTheBodyOfItsKind) {
  v1::Ping ping;
  ping.set_sequence(17);
  const std::string bytes = config::SerializeDeterministic(ping);
  ControlMessage message =
      DecodeControlPayload(v1::CONTROL_KIND_PING, bytes, {});
  EXPECT_EQ(message.kind, v1::CONTROL_KIND_PING);
  EXPECT_EQ(message.ping.sequence(), 17);
  EXPECT_EQ(message.payload, bytes);
  EXPECT_EQ(message.digest, config::MessageDigest(ping));
  EXPECT_EQ(&ControlBody(message), &message.ping);
}

TEST(DecodeControlPayloadTest, AnUnparsablePayloadGetsTheUnparsedDigest) {
  ControlMessage message =
      DecodeControlPayload(v1::CONTROL_KIND_SHUTDOWN, "\xff\xff", {});
  EXPECT_EQ(message.digest, kUnparsedDigest);
  EXPECT_EQ(message.payload, "\xff\xff");
}

TEST(DecodeControlPayloadTest, TheFaultHookSeesTheRunConfigBeforeTheDigest) {
  v1::RunConfig run;
  run.mutable_config()->set_request_id("r1");
  ControlMessage message = DecodeControlPayload(
      v1::CONTROL_KIND_RUN, config::SerializeDeterministic(run),
      [](v1::RunConfig& parsed) {
        parsed.mutable_config()->set_request_id("r2");
      });
  run.mutable_config()->set_request_id("r2");
  EXPECT_EQ(message.run.config().request_id(), "r2");
  EXPECT_EQ(message.digest, config::MessageDigest(run));
}

}  // namespace
}  // namespace ditserve::dist
