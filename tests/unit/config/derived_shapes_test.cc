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

TEST(DerivedShapesTest, EvenOffsetsGiveLargerRunsFirst) {
  EXPECT_THAT(EvenOffsets(3, 2), ElementsAre(0, 2, 3));
  EXPECT_THAT(EvenOffsets(64, 4), ElementsAre(0, 16, 32, 48, 64));
  EXPECT_THAT(EvenOffsets(1, 2), ElementsAre(0, 1, 1));
}

}  // namespace
}  // namespace ditserve::config
