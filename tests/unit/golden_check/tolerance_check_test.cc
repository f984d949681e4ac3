#include "tools/golden_check/tolerance_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace ditserve::golden {
namespace {

using ::testing::HasSubstr;

TEST(ToleranceCheckTest, PassesWithinAtolPlusRtolTimesReference) {
  Tolerance tolerance{1e-3, 1e-2, std::nullopt};
  // Bound at 10: 1e-3 + 0.1.
  auto ok = CompareOutput("x", torch::tensor({10.1f}), torch::tensor({10.0f}),
                          tolerance);
  EXPECT_TRUE(ok.pass);
  EXPECT_NEAR(ok.max_abs_err, 0.1, 1e-5);
  EXPECT_NEAR(ok.max_rel_err, 0.01, 1e-6);
  auto bad = CompareOutput("x", torch::tensor({10.2f}), torch::tensor({10.0f}),
                           tolerance);
  EXPECT_FALSE(bad.pass);
  EXPECT_GT(bad.worst_ratio, 1.0);
}

TEST(ToleranceCheckTest, ExactComparisonFailsOnAnyDifference) {
  Tolerance exact;
  EXPECT_TRUE(CompareOutput("t", torch::tensor({999, 500}),
                            torch::tensor({999, 500}), exact)
                  .pass);
  EXPECT_FALSE(CompareOutput("t", torch::tensor({999, 501}),
                             torch::tensor({999, 500}), exact)
                   .pass);
}

TEST(ToleranceCheckTest, ShapeDtypeAndMissingOutputsFail) {
  Tolerance loose{1.0, 1.0, std::nullopt};
  auto shape =
      CompareOutput("s", torch::zeros({2, 3}), torch::zeros({3, 2}), loose);
  EXPECT_FALSE(shape.pass);
  EXPECT_THAT(shape.problem, HasSubstr("shape"));
  auto dtype = CompareOutput("d", torch::zeros({2}, torch::kFloat64),
                             torch::zeros({2}), loose);
  EXPECT_FALSE(dtype.pass);
  EXPECT_THAT(dtype.problem, HasSubstr("dtype"));
  auto missing = CompareOutput("m", at::Tensor(), torch::zeros({2}), loose);
  EXPECT_FALSE(missing.pass);
  EXPECT_EQ(missing.problem, "not produced");
}

TEST(ToleranceCheckTest, NanFails) {
  auto nan = CompareOutput("n", torch::tensor({NAN}), torch::tensor({1.0f}),
                           Tolerance{1.0, 1.0, std::nullopt});
  EXPECT_FALSE(nan.pass);
  EXPECT_THAT(nan.problem, HasSubstr("NaN"));
}

TEST(ToleranceCheckTest, FractionRuleCountsDifferingValues) {
  Tolerance image{1, 0, 0.25};
  at::Tensor ref = torch::tensor({10, 20, 30, 40}, torch::kUInt8);
  EXPECT_TRUE(CompareOutput("img",
                            torch::tensor({11, 20, 30, 40}, torch::kUInt8), ref,
                            image)
                  .pass);
  // Two of four values differ: 50% > 25%.
  auto many = CompareOutput(
      "img", torch::tensor({11, 21, 30, 40}, torch::kUInt8), ref, image);
  EXPECT_FALSE(many.pass);
  EXPECT_THAT(many.problem, HasSubstr("50% of the values differ"));
  // One value off by 2 > atol.
  EXPECT_FALSE(CompareOutput("img",
                             torch::tensor({12, 20, 30, 40}, torch::kUInt8),
                             ref, image)
                   .pass);
}

TEST(ToleranceCheckTest, ParseToleranceNeedsNonNegativeAtolAndRtol) {
  auto tolerance = ParseTolerance(
      {{"atol", 1}, {"rtol", 0}, {"max_fraction_differing", 0.01}});
  ASSERT_TRUE(tolerance.ok()) << tolerance.status();
  EXPECT_EQ(tolerance->atol, 1.0);
  EXPECT_EQ(*tolerance->max_fraction_differing, 0.01);
  EXPECT_FALSE(ParseTolerance({{"atol", 1e-5}}).ok());
  EXPECT_FALSE(ParseTolerance({{"atol", -1}, {"rtol", 0}}).ok());
}

TEST(ToleranceCheckTest, ReferenceOutputsAreComparedByName) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "tolerance_check_case";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(io::WriteSafetensors(
                  (dir / "outputs.safetensors").string(),
                  {{"sample", torch::ones({2})}, {"other", torch::zeros({1})}})
                  .ok());
  GoldenCase golden_case;
  golden_case.dir = dir.string();
  golden_case.spec = {{"outputs",
                       {{"sample", nlohmann::json::object()},
                        {"other", nlohmann::json::object()}}},
                      {"tolerance",
                       {{"sample", {{"atol", 1e-6}, {"rtol", 0}}},
                        {"other", {{"atol", 1e-6}, {"rtol", 0}}}}}};
  auto comparisons =
      CompareWithReferenceOutputs(golden_case, {{"sample", torch::ones({2})}});
  ASSERT_TRUE(comparisons.ok()) << comparisons.status();
  ASSERT_EQ(comparisons->size(), 2u);
  for (const OutputComparison& c : *comparisons) {
    EXPECT_EQ(c.pass, c.name == "sample") << c.name;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ditserve::golden
