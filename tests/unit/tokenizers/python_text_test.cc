#include "core/tokenizers/python_text.h"

#include "gtest/gtest.h"

namespace ditserve::tokenizers {
namespace {

// Expected values are Python 3.11's text.lower().strip().
TEST(PythonLowerStripTest, LowerCasesFullyAndStripsPythonWhitespace) {
  EXPECT_EQ(PythonLowerStrip("\u3000 A Photo of \u039F\u0394\u03A5\u03A3\u03A3"
                             "\u0395\u03A5\u03A3 in \u0130STANBUL, "
                             "\u00C4\u00D6\u00DC\t\n\x1c"),
            "a photo of \u03BF\u03B4\u03C5\u03C3\u03C3\u03B5\u03C5\u03C2 in "
            "i\u0307stanbul, \u00E4\u00F6\u00FC");
  // A capital sigma alone is not at the end of a word.
  EXPECT_EQ(PythonLowerStrip("\u03A3\u0391 \u03A3"), "\u03C3\u03B1 \u03C3");
}

TEST(PythonLowerStripTest, KeepsInnerWhitespaceAndEmptyText) {
  EXPECT_EQ(PythonLowerStrip("  Two  Words\u00A0"), "two  words");
  EXPECT_EQ(PythonLowerStrip(" \t "), "");
  EXPECT_EQ(PythonLowerStrip(""), "");
}

}  // namespace
}  // namespace ditserve::tokenizers
