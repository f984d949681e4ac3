#include "core/engine/prompt_embedding_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "core/families/flux/flux_family.h"
#include "core/parallel/local_attention.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::engine {
namespace {

using ::ditserve::testing::GoldenCase;
using families::Conditioning;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int kTokens = 16;

// The tiny FLUX.1-dev text encoders (CLIP for the pooled vector, T5 for the
// states), whose calls each test counts.
class PromptEmbeddingCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const GoldenCase golden("pipelines/flux_dev_text");
    families::LoadOptions options;
    options.attention = std::make_shared<parallel::LocalAttention>();
    absl::StatusOr<std::unique_ptr<families::FamilyModel>> model =
        families::FluxFamily().Load(golden.dir(), options);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
  }

  // Encodes through `cache`, recording what reached the encoders.
  absl::StatusOr<Conditioning> Encode(PromptEmbeddingCache& cache,
                                      const std::vector<std::string>& prompts,
                                      int tokens = kTokens) {
    return cache.Encode(
        prompts, tokens,
        [this, tokens](const std::vector<std::string>& missing) {
          encoded_.push_back(missing);
          return model_->EncodePrompts(missing, tokens);
        });
  }

  Conditioning Direct(const std::vector<std::string>& prompts) {
    absl::StatusOr<Conditioning> direct =
        model_->EncodePrompts(prompts, kTokens);
    EXPECT_TRUE(direct.ok()) << direct.status();
    return *direct;
  }

  std::unique_ptr<families::FamilyModel> model_;
  std::vector<std::vector<std::string>> encoded_;
};

void ExpectSame(const Conditioning& actual, const Conditioning& expected) {
  EXPECT_TRUE(torch::equal(actual.states, expected.states));
  EXPECT_TRUE(torch::equal(actual.pooled, expected.pooled));
  EXPECT_FALSE(actual.mask.defined());
  ASSERT_EQ(actual.token_ids.size(), expected.token_ids.size());
  for (size_t i = 0; i < actual.token_ids.size(); ++i) {
    EXPECT_EQ(actual.token_ids[i].first, expected.token_ids[i].first);
    EXPECT_TRUE(
        torch::equal(actual.token_ids[i].second, expected.token_ids[i].second))
        << actual.token_ids[i].first;
  }
}

// `first`'s rows then `second`'s, token ids included (ConcatBatches leaves
// them out).
Conditioning Rows(const Conditioning& first, const Conditioning& second) {
  Conditioning rows = families::ConcatBatches(first, second);
  for (size_t i = 0; i < first.token_ids.size(); ++i) {
    rows.token_ids.emplace_back(
        first.token_ids[i].first,
        torch::cat({first.token_ids[i].second, second.token_ids[i].second}));
  }
  return rows;
}

TEST_F(PromptEmbeddingCacheTest, EachDistinctPromptIsEncodedOnceAsItIsAlone) {
  PromptEmbeddingCache cache(64 << 20);
  absl::StatusOr<Conditioning> batch =
      Encode(cache, {"a fox", "a red barn", "a fox"});
  ASSERT_TRUE(batch.ok()) << batch.status();
  // Each alone: a batch's matrix products may round a row differently (they
  // do with OpenBLAS on AMD EPYC).
  EXPECT_THAT(encoded_, ElementsAre(std::vector<std::string>{"a fox"},
                                    std::vector<std::string>{"a red barn"}));
  ASSERT_EQ(batch->states.size(0), 3);
  // Each row is the bytes its prompt gives encoded on its own.
  const Conditioning fox = Direct({"a fox"});
  const Conditioning barn = Direct({"a red barn"});
  EXPECT_FALSE(torch::equal(fox.states, barn.states));
  ExpectSame(families::ConcatBatches(fox, barn),
             Conditioning{.states = batch->states.narrow(0, 0, 2),
                          .pooled = batch->pooled.narrow(0, 0, 2)});
  EXPECT_TRUE(torch::equal(batch->states[2], fox.states[0]));
  EXPECT_TRUE(torch::equal(batch->pooled[2], fox.pooled[0]));
  const PromptCacheStats stats = cache.stats();
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.misses, 2);
  EXPECT_EQ(stats.entries, 2);
  EXPECT_GT(stats.bytes, 2 * kTokens * fox.states.size(2) * 4);
}

TEST_F(PromptEmbeddingCacheTest, APromptSeenAgainSkipsTheEncoders) {
  PromptEmbeddingCache cache(64 << 20);
  ASSERT_TRUE(Encode(cache, {"a red barn"}).ok());
  absl::StatusOr<Conditioning> mixed = Encode(cache, {"a cat", "a red barn"});
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_THAT(encoded_, ElementsAre(std::vector<std::string>{"a red barn"},
                                    std::vector<std::string>{"a cat"}));
  ExpectSame(*mixed, Rows(Direct({"a cat"}), Direct({"a red barn"})));
  EXPECT_EQ(cache.stats().hits, 1);
  EXPECT_EQ(cache.stats().misses, 2);
}

TEST_F(PromptEmbeddingCacheTest, TheSequenceLengthIsPartOfTheKey) {
  PromptEmbeddingCache cache(64 << 20);
  absl::StatusOr<Conditioning> short_one = Encode(cache, {"a fox"}, 8);
  absl::StatusOr<Conditioning> long_one = Encode(cache, {"a fox"}, 16);
  ASSERT_TRUE(short_one.ok() && long_one.ok());
  EXPECT_EQ(encoded_.size(), 2U);
  EXPECT_EQ(short_one->states.size(1), 8);
  EXPECT_EQ(long_one->states.size(1), 16);
}

TEST_F(PromptEmbeddingCacheTest, LeastRecentlyUsedRowsGoBeyondTheCapacity) {
  PromptEmbeddingCache probe(64 << 20);
  ASSERT_TRUE(Encode(probe, {"a"}).ok());
  const int64_t row_bytes = probe.stats().bytes;
  PromptEmbeddingCache cache(2 * row_bytes);
  encoded_.clear();
  for (const char* prompt : {"a", "b", "a", "c", "b", "a"}) {
    ASSERT_TRUE(Encode(cache, {prompt}).ok()) << prompt;
  }
  // "c" pushed out "b", the least recently used; "b" then pushed out "a".
  EXPECT_THAT(
      encoded_,
      ElementsAre(std::vector<std::string>{"a"}, std::vector<std::string>{"b"},
                  std::vector<std::string>{"c"}, std::vector<std::string>{"b"},
                  std::vector<std::string>{"a"}));
  EXPECT_EQ(cache.stats().entries, 2);
  EXPECT_EQ(cache.stats().bytes, 2 * row_bytes);
  EXPECT_EQ(cache.stats().hits, 1);
}

// Without room, each call encodes its distinct prompts again, each alone as
// with room, so that turning the cache off changes no output.
TEST_F(PromptEmbeddingCacheTest, ZeroCapacityKeepsNothingBetweenCalls) {
  PromptEmbeddingCache cache(0);
  const Conditioning fox = Direct({"a fox"});
  for (int call = 0; call < 2; ++call) {
    absl::StatusOr<Conditioning> batch = Encode(cache, {"a fox", "a fox"});
    ASSERT_TRUE(batch.ok()) << batch.status();
    ExpectSame(*batch, Rows(fox, fox));
  }
  EXPECT_THAT(encoded_, ElementsAre(std::vector<std::string>{"a fox"},
                                    std::vector<std::string>{"a fox"}));
  EXPECT_EQ(cache.stats().entries, 0);
  EXPECT_EQ(cache.stats().misses, 2);
  EXPECT_EQ(cache.stats().hits, 2);
}

TEST_F(PromptEmbeddingCacheTest, ARowLargerThanTheCapacityIsNotKept) {
  PromptEmbeddingCache cache(1024);
  for (int call = 0; call < 2; ++call) {
    absl::StatusOr<Conditioning> batch = Encode(cache, {"a fox"});
    ASSERT_TRUE(batch.ok()) << batch.status();
    ExpectSame(*batch, Direct({"a fox"}));
  }
  EXPECT_EQ(encoded_.size(), 2U);
  EXPECT_EQ(cache.stats().entries, 0);
  EXPECT_EQ(cache.stats().bytes, 0);
}

TEST_F(PromptEmbeddingCacheTest, AFailedEncodeKeepsNothingOfItsCall) {
  PromptEmbeddingCache cache(64 << 20);
  absl::StatusOr<Conditioning> failed = Encode(cache, {"a fox", "bad \xff"});
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(failed.status().message(), HasSubstr("UTF-8"));
  EXPECT_EQ(cache.stats().entries, 0);
  ASSERT_TRUE(Encode(cache, {"a fox"}).ok());
  // "a fox", then the bad prompt, each alone, then "a fox" again.
  EXPECT_EQ(encoded_.size(), 3U);
}

}  // namespace
}  // namespace ditserve::engine
