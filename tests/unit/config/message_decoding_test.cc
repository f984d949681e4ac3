#include "core/config/message_decoding.h"

#include <string>

#include "absl/status/status.h"
#include "ditserve/v1/control.pb.h"
#include "ditserve/v1/generation.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::config {
namespace {

using ::testing::HasSubstr;

// Field `number` as a length-delimited record holding `text`, which may be
// any bytes: the encoding a client with no UTF-8 check would send.
std::string StringRecord(int number, const std::string& text) {
  return std::string{static_cast<char>(number << 3 | 2),
                     static_cast<char>(text.size())} +
         text;
}

// GenerateRequest.prompt.
std::string PromptRecord(const std::string& text) {
  return StringRecord(2, text);
}

TEST(ParseRequestTest, ValidRequestParses) {
  v1::GenerateRequest sent;
  sent.add_prompt("a red fox");
  sent.set_height(512);
  v1::GenerateRequest parsed;
  ASSERT_TRUE(ParseRequest(sent.SerializeAsString(), parsed).ok());
  EXPECT_EQ(parsed.prompt(0), "a red fox");
  EXPECT_EQ(parsed.height(), 512);
}

TEST(ParseRequestTest, InvalidUtf8NamesTheFieldTheIndexAndTheOffset) {
  v1::GenerateRequest parsed;
  const absl::Status status =
      ParseRequest(PromptRecord("a cat") + PromptRecord("caf\xc3("), parsed);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("the request is not a valid GenerateRequest: "
                        "prompt[1] is not valid UTF-8 (first bad byte at 3)"));
}

TEST(ParseRequestTest, InvalidUtf8InANestedMessageNamesItsPath) {
  v1::InputConfig config;
  config.add_prompt("fine");
  // InputConfig.prompt is field 4.
  std::string nested = config.SerializeAsString() + StringRecord(4, "\xff");
  const std::string run =
      std::string{0x0a, static_cast<char>(nested.size())} + nested;
  v1::RunConfig parsed;
  const absl::Status status = ParseRequest(run, parsed);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("config.prompt[1] is not valid UTF-8 (first bad byte "
                        "at 0)"));
}

TEST(ParseRequestTest, GarbageIsNotAProtobufEncoding) {
  v1::GenerateRequest parsed;
  const absl::Status status = ParseRequest("\xff\xff\xff\xff garbage", parsed);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("the request is not a valid GenerateRequest: its bytes "
                        "are not a protobuf encoding (truncated or corrupt)"));
}

TEST(ParseRequestTest, TruncatedBytesAreNotAProtobufEncoding) {
  v1::GenerateRequest sent;
  sent.add_prompt("a long enough prompt to cut in half");
  const std::string bytes = sent.SerializeAsString();
  v1::GenerateRequest parsed;
  const absl::Status status =
      ParseRequest(bytes.substr(0, bytes.size() / 2), parsed);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("truncated or corrupt"));
}

TEST(ParseRequestTest, EmptyBytesAreAnEmptyRequest) {
  v1::GetServerInfoRequest parsed;
  EXPECT_TRUE(ParseRequest("", parsed).ok());
}

}  // namespace
}  // namespace ditserve::config
