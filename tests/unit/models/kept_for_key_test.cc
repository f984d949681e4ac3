#include "core/models/kept_for_key.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ditserve::models {
namespace {

TEST(KeptForKeyTest, MakesOnlyForANewKey) {
  KeptForKey<int, std::string> kept;
  int made = 0;
  const auto make = [&](const std::string& value) {
    return [&made, value] {
      ++made;
      return value;
    };
  };
  EXPECT_EQ(kept.Get(1, make("one")), "one");
  EXPECT_EQ(kept.Get(1, make("other")), "one") << "kept for key 1";
  EXPECT_EQ(made, 1);
  EXPECT_EQ(kept.Get(2, make("two")), "two");
  EXPECT_EQ(kept.Get(1, make("one again")), "one again")
      << "only the last key's value is kept";
  EXPECT_EQ(made, 3);
}

TEST(KeptForKeyTest, KeepsNoFailure) {
  KeptForKey<int, std::string> kept;
  const absl::StatusOr<std::string> failed =
      kept.Get(1, []() -> absl::StatusOr<std::string> {
        return absl::InvalidArgumentError("no table");
      });
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  const absl::StatusOr<std::string> made =
      kept.Get(1, []() -> absl::StatusOr<std::string> { return "table"; });
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(*made, "table");
  const absl::StatusOr<std::string> again =
      kept.Get(1, []() -> absl::StatusOr<std::string> { return "other"; });
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, "table");
}

}  // namespace
}  // namespace ditserve::models
