#include "core/config/derived_shapes.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::config {
namespace {

using ::testing::ElementsAre;

TEST(DerivedShapesTest, EvenSplitHasNoPadding) {
  const SequenceSplit split = SplitSequence(4608, 4);
  EXPECT_EQ(split.shard_tokens, 1152);
  EXPECT_EQ(split.padded_tokens, 4608);
  EXPECT_EQ(split.padding_tokens, 0);
}

TEST(DerivedShapesTest, OddTotalIsPaddedToAMultipleOfTheDegree) {
  const SequenceSplit split = SplitSequence(6573, 4);
  EXPECT_EQ(split.padded_tokens, 6576);
  EXPECT_EQ(split.padding_tokens, 3);
  EXPECT_EQ(split.shard_tokens, 1644);
}

TEST(DerivedShapesTest, PipeFusionShardsAreEqualAndOwnEveryTokenOnce) {
  // 16 tokens over 3 ranks: shares of 6, the last moved back to [10, 16).
  const PipeFusionShard last = PipeFusionShardOf(16, 3, 2);
  EXPECT_EQ(last.begin, 10);
  EXPECT_EQ(last.tokens, 6);
  EXPECT_EQ(last.owned_begin, 12);
  EXPECT_EQ(last.owned_end, 16);
  for (const int tokens : {1, 4, 9, 16, 17}) {
    for (const int degree : {1, 2, 3, 4}) {
      int next_owned = 0;
      for (int index = 0; index < degree; ++index) {
        const PipeFusionShard shard = PipeFusionShardOf(tokens, degree, index);
        EXPECT_EQ(shard.tokens, (tokens + degree - 1) / degree);
        EXPECT_GE(shard.begin, 0);
        EXPECT_LE(shard.begin + shard.tokens, tokens);
        EXPECT_EQ(shard.owned_begin, next_owned);
        EXPECT_LE(shard.begin, shard.owned_begin);
        EXPECT_LE(shard.owned_end, shard.begin + shard.tokens);
        next_owned = shard.owned_end;
      }
      EXPECT_EQ(next_owned, tokens) << tokens << " over " << degree;
    }
  }
}

TEST(DerivedShapesTest, EvenOffsetsGiveLargerRunsFirst) {
  EXPECT_THAT(EvenOffsets(3, 2), ElementsAre(0, 2, 3));
  EXPECT_THAT(EvenOffsets(64, 4), ElementsAre(0, 16, 32, 48, 64));
  EXPECT_THAT(EvenOffsets(1, 2), ElementsAre(0, 1, 1));
}

}  // namespace
}  // namespace ditserve::config
