#include "core/models/sequence_shard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

namespace ditserve::models {
namespace {

using ::testing::HasSubstr;

struct Expected {
  int64_t first_begin, first_tokens, second_begin, second_tokens, padding;
};

void ExpectSplit(const SequenceShard& shard, const Expected& expected) {
  // A sequence of 5 tokens of one part, then 3 of another, then padding.
  const ShardParts split = SplitShard(shard, {5, 3});
  ASSERT_EQ(split.parts.size(), 2U);
  EXPECT_EQ(split.parts[0].begin, expected.first_begin);
  EXPECT_EQ(split.parts[0].tokens, expected.first_tokens);
  EXPECT_EQ(split.parts[1].begin, expected.second_begin);
  EXPECT_EQ(split.parts[1].tokens, expected.second_tokens);
  EXPECT_EQ(split.padding, expected.padding);
}

TEST(SplitShardTest, ShardsOfAPaddedTwoPartSequence) {
  // 8 tokens padded to 9 over 3 ranks.
  ExpectSplit({.begin = 0, .tokens = 3}, {0, 3, 0, 0, 0});
  ExpectSplit({.begin = 3, .tokens = 3}, {3, 2, 0, 1, 0});
  ExpectSplit({.begin = 6, .tokens = 3}, {5, 0, 1, 2, 1});
}

TEST(SplitShardTest, ShardOfPaddingOnly) {
  ExpectSplit({.begin = 8, .tokens = 2}, {5, 0, 3, 0, 2});
}

TEST(PadTokensTest, AddsZeroTokensAroundTheSequence) {
  const at::Tensor x = torch::ones({2, 3, 4});
  const at::Tensor padded = PadTokens(x, 1, 2);
  ASSERT_EQ(padded.sizes(), (std::vector<int64_t>{2, 6, 4}));
  EXPECT_TRUE(padded.narrow(1, 1, 3).equal(x));
  EXPECT_EQ(padded.narrow(1, 0, 1).abs().sum().item<float>(), 0);
  EXPECT_EQ(padded.narrow(1, 4, 2).abs().sum().item<float>(), 0);
}

TEST(CheckSequenceShardTest, NamesWhatDoesNotFit) {
  EXPECT_THAT(
      std::string(CheckSequenceShard({.begin = -1, .tokens = 2}, 1).message()),
      HasSubstr("sequence shard begin -1, tokens 2"));
  const absl::Status mask = CheckSequenceShard(
      {.begin = 0, .tokens = 2, .key_mask = torch::ones({1, 3}, at::kBool)}, 1);
  EXPECT_EQ(mask.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(mask.message()), HasSubstr("key_mask"));
  EXPECT_TRUE(CheckSequenceShard({.begin = 4, .tokens = 2}, 1).ok());
}

}  // namespace
}  // namespace ditserve::models
