#include "core/tokenizers/clip_text_cleaner.h"

#include <string>

#include "gtest/gtest.h"

namespace ditserve::tokenizers {
namespace {

std::string Clean(const std::string& text) {
  absl::StatusOr<std::string> cleaned = CleanClipText(text);
  EXPECT_TRUE(cleaned.ok()) << cleaned.status();
  return cleaned.value_or("");
}

TEST(CleanClipTextTest, CollapsesWhitespaceAndLowerCases) {
  EXPECT_EQ(Clean("  A\tRed\n\nFOX  "), "a red fox");
  EXPECT_EQ(Clean(" "), "");
  EXPECT_EQ(Clean(""), "");
}

TEST(CleanClipTextTest, RemovesControlAndFormatCharacters) {
  // U+200B zero width space (Cf), U+0007 bell (Cc), U+FFFD.
  EXPECT_EQ(Clean("zero\u200Bwidth\a \uFFFDx"), "zerowidth x");
}

TEST(CleanClipTextTest, NoBreakSpaceAndLineSeparatorSplitWords) {
  EXPECT_EQ(Clean("non\u00A0breaking\u2028line"), "non breaking line");
}

TEST(CleanClipTextTest, SetsCjkIdeographsApart) {
  EXPECT_EQ(Clean("日本語のテキスト"), "日 本 語 のテキスト");
}

TEST(CleanClipTextTest, ComposesToNfcBeforeLowerCasing) {
  // "E" + combining acute becomes "é" (U+00E9).
  EXPECT_EQ(Clean("CAFE\u0301"), "caf\u00E9");
}

TEST(CleanClipTextTest, LowerCasesLikePythonIncludingFinalSigma) {
  EXPECT_EQ(Clean("ΟΔΟΣ ΣΑ"), "οδος σα");
  EXPECT_EQ(Clean("\u0130"), "i\u0307");
  // Full-width letters lower-case; no NFKC folding.
  EXPECT_EQ(Clean("ＡＢＣ"), "ａｂｃ");
}

}  // namespace
}  // namespace ditserve::tokenizers
