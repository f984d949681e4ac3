#include "server/log_text.h"

#include <string>

#include "gtest/gtest.h"

namespace ditserve::server {
namespace {

TEST(LogTextTest, PrintableTextIsKept) {
  EXPECT_EQ(LogText("height 70 is not a multiple of 16"),
            "height 70 is not a multiple of 16");
}

TEST(LogTextTest, LineBreaksQuotesAndBinaryAreEscaped) {
  EXPECT_EQ(LogText("a\nb\r\"c\"\x1b[31m\xff"), R"(a\nb\r\"c\"\x1b[31m\xff)");
}

TEST(LogTextTest, LongTextIsCutSayingHowMuchWasLeftOut) {
  const std::string text(kMaxLoggedTextBytes + 1000, 'x');
  EXPECT_EQ(LogText(text),
            std::string(kMaxLoggedTextBytes, 'x') + "... (1000 more bytes)");
  EXPECT_EQ(LogText(std::string(kMaxLoggedTextBytes, 'y')),
            std::string(kMaxLoggedTextBytes, 'y'));
}

}  // namespace
}  // namespace ditserve::server
