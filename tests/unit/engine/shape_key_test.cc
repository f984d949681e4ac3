#include "core/engine/shape_key.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/frozen_test_config.h"

namespace ditserve::engine {
namespace {

using ::ditserve::testing::FreezeTestConfig;
using ::ditserve::testing::TestConfigRequest;
using ::ditserve::testing::TestParallelConfig;
using ::testing::Contains;
using ::testing::IsEmpty;

v1::InputConfig Frozen(const TestConfigRequest& request, int world = 1) {
  absl::StatusOr<v1::ParallelConfig> parallel = TestParallelConfig(world);
  EXPECT_TRUE(parallel.ok()) << parallel.status();
  absl::StatusOr<v1::InputConfig> config = FreezeTestConfig(request, *parallel);
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

TEST(ShapeKeyTest, PromptTextSeedAndRequestIdDoNotChangeTheKey) {
  TestConfigRequest first;
  TestConfigRequest second;
  second.request_id = "another";
  second.sequence_number = 9;
  second.seed = 7;
  v1::InputConfig other = Frozen(second);
  other.set_prompt(0, "a completely different prompt");
  EXPECT_TRUE(ShapeKey::Of(Frozen(first)) == ShapeKey::Of(other));
}

TEST(ShapeKeyTest, SequenceLengthChangeListsTheFieldAndTheDerivedShapes) {
  TestConfigRequest short_text;
  TestConfigRequest long_text;
  long_text.max_sequence_length = 512;
  const std::vector<std::string> differing =
      ShapeKey::Of(Frozen(short_text))
          .DifferingFields(ShapeKey::Of(Frozen(long_text)));
  EXPECT_THAT(differing, Contains("max_sequence_length 256 → 512"));
  EXPECT_THAT(differing, Contains("shapes.text_tokens 256 → 512"));
}

TEST(ShapeKeyTest, PromptCountAndDpOffsetsAreInTheKey) {
  TestConfigRequest one;
  TestConfigRequest two;
  two.prompts = 2;
  const std::vector<std::string> differing =
      ShapeKey::Of(Frozen(one, 4))
          .DifferingFields(ShapeKey::Of(Frozen(two, 4)));
  EXPECT_THAT(differing, Contains("prompt count 1 → 2"));
  EXPECT_THAT(differing, Contains("shapes.dp_group_prompt_offsets[2] 1 → 2"));
}

TEST(ShapeKeyTest, EqualKeysHaveNoDifferingFields) {
  EXPECT_THAT(
      ShapeKey::Of(Frozen({})).DifferingFields(ShapeKey::Of(Frozen({}))),
      IsEmpty());
}

}  // namespace
}  // namespace ditserve::engine
