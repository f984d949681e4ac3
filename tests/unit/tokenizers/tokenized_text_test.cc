#include "core/tokenizers/tokenized_text.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace ditserve::tokenizers {
namespace {

using Ids = std::vector<int64_t>;

TEST(TruncateAndPadTest, PadsShortTextAndMasksThePadding) {
  absl::StatusOr<TokenizedText> out = TruncateAndPad({5, 6}, {9}, {8}, 6, 0);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->input_ids, (Ids{9, 5, 6, 8, 0, 0}));
  EXPECT_EQ(out->attention_mask, (Ids{1, 1, 1, 1, 0, 0}));
}

TEST(TruncateAndPadTest, TruncatesTheTextNotTheSpecialTokens) {
  absl::StatusOr<TokenizedText> out =
      TruncateAndPad({5, 6, 7, 8}, {}, {1}, 3, 0);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->input_ids, (Ids{5, 6, 1}));
  EXPECT_EQ(out->attention_mask, (Ids{1, 1, 1}));
}

TEST(TruncateAndPadTest, MaxLengthBelowTheSpecialTokensIsAnError) {
  absl::StatusOr<TokenizedText> out = TruncateAndPad({5}, {9}, {8}, 1, 0);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(),
            "max_length 1 is below the 2 special tokens every sequence "
            "carries");
}

}  // namespace
}  // namespace ditserve::tokenizers
