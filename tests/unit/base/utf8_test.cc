#include "core/base/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace ditserve::base {
namespace {

TEST(Utf8Test, AcceptsAsciiAndMultibyteText) {
  EXPECT_EQ(FindInvalidUtf8(""), std::nullopt);
  EXPECT_EQ(FindInvalidUtf8("a red fox"), std::nullopt);
  EXPECT_EQ(
      FindInvalidUtf8("caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\xA6\x8A"),
      std::nullopt);
}

TEST(Utf8Test, ReportsOffsetOfFirstBadByte) {
  EXPECT_EQ(FindInvalidUtf8("ok\xFF"), 2U);
  EXPECT_EQ(FindInvalidUtf8("ab\xC3"), 2U);            // truncated
  EXPECT_EQ(FindInvalidUtf8("\xC0\xAF"), 0U);          // overlong '/'
  EXPECT_EQ(FindInvalidUtf8("x\xED\xA0\x80"), 1U);     // surrogate U+D800
  EXPECT_EQ(FindInvalidUtf8("\xF4\x90\x80\x80"), 0U);  // above U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("\xE2\x28\xA1"), 0U);      // bad continuation
}

TEST(Utf8Test, CheckNamesTheTextAndTheOffset) {
  EXPECT_TRUE(CheckUtf8("prompt", "caf\xC3\xA9").ok());
  const absl::Status status = CheckUtf8("prompt[2]", "ok\xFF");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "prompt[2] is not valid UTF-8 (first bad byte at 2)");
}

TEST(Utf8Test, ShortenedKeepsShortTextAndCutsLongTextBetweenCharacters) {
  EXPECT_EQ(Shortened(std::string(64, 'a')), std::string(64, 'a'));
  EXPECT_EQ(Shortened(std::string(65, 'a')), std::string(64, 'a') + "...");
  // 63 bytes, then a two-byte character across the 64-byte mark.
  const std::string straddling = std::string(63, 'a') + "\xC3\xA9" + "b";
  EXPECT_EQ(Shortened(straddling), std::string(63, 'a') + "...");
  EXPECT_FALSE(FindInvalidUtf8(Shortened(straddling)).has_value());
}

}  // namespace
}  // namespace ditserve::base
