#include "core/tokenizers/byte_level_bpe.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace ditserve::tokenizers {
namespace {

using Symbols = std::vector<std::string>;

ByteLevelBpe FromMerges(const std::string& merges) {
  absl::StatusOr<ByteLevelBpe> bpe =
      ByteLevelBpe::FromMergesText(merges, "merges.txt", 100);
  EXPECT_TRUE(bpe.ok()) << bpe.status();
  return *std::move(bpe);
}

TEST(ByteSymbolsTest, PrintableBytesStandForThemselvesOthersAreShifted) {
  EXPECT_EQ(ByteSymbols("az!~"), "az!~");
  EXPECT_EQ(ByteSymbols(" "), "\xC4\xA0");                 // U+0120 'Ġ'
  EXPECT_EQ(ByteSymbols("\n"), "\xC4\x8A");                // U+010A 'Ċ'
  EXPECT_EQ(ByteSymbols("\xC3\xA9"), "\xC3\x83\xC2\xA9");  // "é" -> "Ã©"
  EXPECT_EQ(ByteSymbols("\xAD"), "\xC5\x83");  // soft hyphen -> U+0143
}

TEST(ByteLevelBpeTest, WithoutMergesEveryByteIsASymbolAndTheLastEndsTheWord) {
  EXPECT_EQ(FromMerges("#version: 0.2\n").Encode("cat"),
            (Symbols{"c", "a", "t</w>"}));
}

TEST(ByteLevelBpeTest, LowestRankMergesFirst) {
  const ByteLevelBpe bpe = FromMerges("#version: 0.2\na t</w>\nc a\n");
  // "a t</w>" (rank 0) wins over "c a" (rank 1).
  EXPECT_EQ(bpe.Encode("cat"), (Symbols{"c", "at</w>"}));
}

TEST(ByteLevelBpeTest, MergesNonOverlappingOccurrencesLeftToRight) {
  const ByteLevelBpe bpe = FromMerges("#version: 0.2\na a\n");
  EXPECT_EQ(bpe.Encode("aaab"), (Symbols{"aa", "a", "b</w>"}));
}

TEST(ByteLevelBpeTest, MergesBeyondTheLimitAreIgnored) {
  absl::StatusOr<ByteLevelBpe> bpe =
      ByteLevelBpe::FromMergesText("#version: 0.2\nc a\nca t</w>\n", "m", 1);
  ASSERT_TRUE(bpe.ok()) << bpe.status();
  EXPECT_EQ(bpe->Encode("cat"), (Symbols{"ca", "t</w>"}));
}

TEST(ByteLevelBpeTest, LineWithoutTwoSymbolsIsAnError) {
  absl::StatusOr<ByteLevelBpe> bpe = ByteLevelBpe::FromMergesText(
      "#version: 0.2\nabc\n", "/ckpt/merges.txt", 100);
  EXPECT_EQ(bpe.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bpe.status().message(),
            "tokenizer file /ckpt/merges.txt line 2 \"abc\" is not a merge of "
            "two symbols \"<left> <right>\"");
}

}  // namespace
}  // namespace ditserve::tokenizers
