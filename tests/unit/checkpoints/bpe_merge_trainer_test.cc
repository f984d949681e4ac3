#include "core/checkpoints/bpe_merge_trainer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ditserve::checkpoints {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(ClipStyleWordsTest, LowerCasesAndSplitsDigitsAndPunctuation) {
  EXPECT_THAT(
      ClipStyleWords("A Red-fox, 42 times!!"),
      ElementsAre("a", "red", "-", "fox", ",", "4", "2", "times", "!!"));
}

TEST(ClipStyleWordsTest, TakesContractionsAsWords) {
  EXPECT_THAT(
      ClipStyleWords("The CAT'S hat, isn't it?'"),
      ElementsAre("the", "cat", "'s", "hat", ",", "isn", "'t", "it", "?'"));
}

TEST(TrainBpeMergesTest, MergesTheMostFrequentPairFirst) {
  // "lo" occurs in every word; "w</w>" ends two of three.
  const std::vector<std::string> words = {"low", "low", "lower", "slow"};
  const std::vector<BpeMerge> merges = TrainBpeMerges(words, 2);
  EXPECT_THAT(merges, ElementsAre(Pair("l", "o"), Pair("lo", "w</w>")));
}

TEST(TrainBpeMergesTest, BreaksTiesByTheSmallestPair) {
  // "a b</w>" and "c d</w>" occur once each.
  EXPECT_THAT(TrainBpeMerges({"cd", "ab"}, 1), ElementsAre(Pair("a", "b</w>")));
}

TEST(TrainBpeMergesTest, StopsWhenEveryWordIsOneSymbol) {
  EXPECT_THAT(TrainBpeMerges({"ab"}, 10), ElementsAre(Pair("a", "b</w>")));
}

}  // namespace
}  // namespace ditserve::checkpoints
