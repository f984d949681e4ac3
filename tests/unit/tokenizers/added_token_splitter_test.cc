#include "core/tokenizers/added_token_splitter.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
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

// Stands for a tokenizer's model: one id per plain run, its length.
absl::Status AppendRunLength(absl::string_view plain,
                             std::vector<int64_t>* ids) {
  ids->push_back(static_cast<int64_t>(plain.size()));
  return absl::OkStatus();
}

TEST(AddedTokenSplitterTest, EncodeKeepsAddedIdsAndEncodesPlainRunsInOrder) {
  const AddedTokenSplitter splitter({{"</s>", 1000}});
  absl::StatusOr<std::vector<int64_t>> ids =
      splitter.Encode("ab</s>cde</s>", AppendRunLength);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_THAT(*ids, ::testing::ElementsAre(2, 1000, 3, 1000));
}

TEST(AddedTokenSplitterTest, EncodeRefusesInvalidUtf8BeforeEncodingAnyRun) {
  const AddedTokenSplitter splitter({{"</s>", 1000}});
  int runs = 0;
  absl::StatusOr<std::vector<int64_t>> ids = splitter.Encode(
      "fine</s>bad\xFF", [&runs](absl::string_view, std::vector<int64_t>*) {
        ++runs;
        return absl::OkStatus();
      });
  EXPECT_EQ(ids.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ids.status().message(),
            "text to tokenize is not valid UTF-8 (first bad byte at 11)");
  EXPECT_EQ(runs, 0);
}

TEST(AddedTokenSplitterTest, EncodePassesOnThePlainEncodersError) {
  const AddedTokenSplitter splitter({});
  absl::StatusOr<std::vector<int64_t>> ids =
      splitter.Encode("text", [](absl::string_view, std::vector<int64_t>*) {
        return absl::InternalError("model failed");
      });
  EXPECT_EQ(ids.status(), absl::InternalError("model failed"));
}

}  // namespace
}  // namespace ditserve::tokenizers
