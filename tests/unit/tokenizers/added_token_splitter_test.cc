#include "core/tokenizers/added_token_splitter.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace ditserve::tokenizers {
namespace {

using Pieces = std::vector<std::pair<std::string, std::optional<int64_t>>>;

Pieces Split(const AddedTokenSplitter& splitter, const std::string& text) {
  Pieces pieces;
  for (const TextSegment& segment : splitter.Split(text)) {
    pieces.emplace_back(std::string(segment.text), segment.added_token_id);
  }
  return pieces;
}

TEST(AddedTokenSplitterTest, CutsTokensOutAndKeepsSpacesOfPlainRuns) {
  const AddedTokenSplitter splitter({{"</s>", 1}, {"<pad>", 0}});
  EXPECT_EQ(
      Split(splitter, "text with </s> end"),
      (Pieces{
          {"text with ", std::nullopt}, {"</s>", 1}, {" end", std::nullopt}}));
}

TEST(AddedTokenSplitterTest, AdjacentTokensLeaveNoEmptyRuns) {
  const AddedTokenSplitter splitter({{"</s>", 1}, {"<pad>", 0}});
  EXPECT_EQ(Split(splitter, "<pad></s>"), (Pieces{{"<pad>", 0}, {"</s>", 1}}));
  EXPECT_TRUE(Split(splitter, "").empty());
}

TEST(AddedTokenSplitterTest, PrefersTheLongestTokenAtAPosition) {
  const AddedTokenSplitter splitter({{"<a", 7}, {"<ab>", 8}});
  EXPECT_EQ(Split(splitter, "x<ab><a"),
            (Pieces{{"x", std::nullopt}, {"<ab>", 8}, {"<a", 7}}));
}

}  // namespace
}  // namespace ditserve::tokenizers
