#include "core/base/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace ditserve::base {
namespace {

using ::testing::HasSubstr;

TEST(PythonJsonTest, NonFiniteTokensReadBackAsNumbers) {
  auto json = ParsePythonJson(
      R"({"a": -Infinity, "b": Infinity, "c": NaN, "d": [1, -Infinity]})",
      "test");
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*JsonNumber((*json)["a"]), -INFINITY);
  EXPECT_EQ(*JsonNumber((*json)["b"]), INFINITY);
  EXPECT_TRUE(std::isnan(*JsonNumber((*json)["c"])));
  EXPECT_EQ(*JsonNumber((*json)["d"][1]), -INFINITY);
  EXPECT_EQ(*JsonNumber((*json)["d"][0]), 1.0);
}

TEST(PythonJsonTest, TokensInsideStringsAreLeftAlone) {
  auto json = ParsePythonJson(R"({"name": "NaN \"Infinity\" x"})", "test");
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ((*json)["name"], "NaN \"Infinity\" x");
}

TEST(PythonJsonTest, InvalidJsonIsAnErrorNamingTheSource) {
  auto json = ParsePythonJson("{\"a\": }", "scheduler_config.json");
  EXPECT_EQ(json.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(json.status().message(), HasSubstr("scheduler_config.json"));
}

TEST(PythonJsonTest, MissingFileIsNotFound) {
  EXPECT_EQ(ReadJsonFile("/nonexistent/config.json").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(PythonJsonTest, JsonNumberRejectsOtherStrings) {
  EXPECT_FALSE(JsonNumber(nlohmann::json("fast")).ok());
  EXPECT_FALSE(JsonNumber(nlohmann::json(true)).ok());
}

}  // namespace
}  // namespace ditserve::base
