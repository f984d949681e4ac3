#include "core/parallel/sequence_sharding.h"

#include <torch/torch.h>

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "core/config/derived_shapes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::parallel {
namespace {

using ::testing::HasSubstr;

// The shapes Freeze derives for a sequence of `tokens` over `degree` ranks.
v1::DerivedShapes ShapesFor(int tokens, int degree) {
  const config::SequenceSplit split = config::SplitSequence(tokens, degree);
  v1::DerivedShapes shapes;
  shapes.set_sequence_tokens(tokens);
  shapes.set_padded_sequence_tokens(split.padded_tokens);
  shapes.set_sequence_padding_tokens(split.padding_tokens);
  shapes.set_shard_tokens(split.shard_tokens);
  return shapes;
}

std::vector<SequenceSharding> AllShards(int tokens, int degree) {
  std::vector<SequenceSharding> shards;
  for (int index = 0; index < degree; ++index) {
    absl::StatusOr<SequenceSharding> sharding =
        SequenceSharding::Create(ShapesFor(tokens, degree), degree, index);
    EXPECT_TRUE(sharding.ok()) << sharding.status();
    shards.push_back(*sharding);
  }
  return shards;
}

TEST(SequenceShardingTest, ShardsOfAnyLengthConcatenateToThePaddedSequence) {
  for (int tokens : {1, 5, 8, 13}) {
    for (int degree : {1, 2, 3, 4}) {
      const at::Tensor sequence =
          at::arange(2 * tokens * 3, at::kFloat).reshape({2, tokens, 3}) + 1;
      std::vector<at::Tensor> pieces;
      for (const SequenceSharding& shard : AllShards(tokens, degree)) {
        absl::StatusOr<at::Tensor> piece = shard.Shard(sequence, /*dim=*/1);
        ASSERT_TRUE(piece.ok()) << piece.status();
        ASSERT_EQ(piece->size(1), shard.shard_tokens());
        pieces.push_back(*piece);
      }
      const at::Tensor padded = at::cat(pieces, 1);
      ASSERT_EQ(padded.size(1) % degree, 0);
      EXPECT_TRUE(at::equal(padded.narrow(1, 0, tokens), sequence))
          << tokens << " tokens over " << degree;
      // Padding is zeros, appended at the end.
      EXPECT_EQ(padded.narrow(1, tokens, padded.size(1) - tokens)
                    .count_nonzero()
                    .item<int64_t>(),
                0);
      absl::StatusOr<at::Tensor> unpadded =
          AllShards(tokens, degree)[0].Unpad(padded, /*dim=*/1);
      ASSERT_TRUE(unpadded.ok()) << unpadded.status();
      EXPECT_TRUE(at::equal(*unpadded, sequence));
    }
  }
}

TEST(SequenceShardingTest, KeyMaskIsFalseOnPaddingAndWhereTheUserMaskIs) {
  at::Tensor user = at::ones({2, 5}, at::kBool);
  user.index_put_({1, 2}, false);
  std::vector<at::Tensor> pieces;
  for (const SequenceSharding& shard : AllShards(5, 4)) {
    absl::StatusOr<at::Tensor> mask = shard.ShardKeyMask(2, user);
    ASSERT_TRUE(mask.ok()) << mask.status();
    pieces.push_back(*mask);
  }
  // 5 tokens over 4 ranks: 8 padded, shards of 2; the last shard is all
  // padding.
  at::Tensor expected = at::zeros({2, 8}, at::kBool);
  expected.narrow(1, 0, 5).copy_(user);
  EXPECT_TRUE(at::equal(at::cat(pieces, 1), expected));
}

TEST(SequenceShardingTest, KeyMaskWithoutUserMaskHidesOnlyPadding) {
  absl::StatusOr<at::Tensor> mask = AllShards(7, 2)[1].ShardKeyMask(
      /*batch=*/1, std::nullopt);
  ASSERT_TRUE(mask.ok()) << mask.status();
  // 7 tokens over 2 ranks: shard 1 holds tokens 4..6 and one of padding.
  EXPECT_TRUE(at::equal(
      *mask, at::tensor({1, 1, 1, 0}, at::kInt).to(at::kBool).unsqueeze(0)));
}

TEST(SequenceShardingTest, WrongSequenceLengthIsAnError) {
  absl::StatusOr<at::Tensor> shard =
      AllShards(5, 2)[0].Shard(at::zeros({1, 6, 3}), /*dim=*/1);
  EXPECT_EQ(shard.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shard.status().message(), HasSubstr("has 6 tokens"));
  EXPECT_THAT(shard.status().message(), HasSubstr("expected 5"));
}

TEST(SequenceShardingTest, UserMaskOfWrongShapeIsAnError) {
  absl::StatusOr<at::Tensor> mask =
      AllShards(5, 2)[0].ShardKeyMask(2, at::ones({2, 4}, at::kBool));
  EXPECT_EQ(mask.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mask.status().message(), HasSubstr("user key mask"));
}

TEST(SequenceShardingTest, ShapesThatDoNotSplitOverTheDegreeAreRejected) {
  // Derived for degree 2, used with degree 4.
  absl::StatusOr<SequenceSharding> sharding =
      SequenceSharding::Create(ShapesFor(5, 2), 4, 0);
  EXPECT_EQ(sharding.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sharding.status().message(),
              HasSubstr("shapes.padded_sequence_tokens"));
}

TEST(SequenceShardingTest, PaddingOfAWholeShardOrMoreIsRejected) {
  v1::DerivedShapes shapes = ShapesFor(5, 2);
  shapes.set_padded_sequence_tokens(8);
  shapes.set_shard_tokens(4);
  absl::StatusOr<SequenceSharding> sharding =
      SequenceSharding::Create(shapes, 2, 0);
  EXPECT_EQ(sharding.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sharding.status().message(), HasSubstr("rounded up"));
}

TEST(SequenceShardingTest, IndexOutsideTheGroupIsRejected) {
  absl::StatusOr<SequenceSharding> sharding =
      SequenceSharding::Create(ShapesFor(5, 2), 2, 2);
  EXPECT_EQ(sharding.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(sharding.status().message(), HasSubstr("outside [0, 2)"));
}

}  // namespace
}  // namespace ditserve::parallel
