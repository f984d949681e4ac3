#include "core/schedulers/numpy_compat.h"

#include <gtest/gtest.h>

namespace ditserve::schedulers {
namespace {

TEST(NumpyCompatTest, LinspaceHitsBothEndpointsExactly) {
  std::vector<double> values = Linspace(1.0, 1.0 / 3, 3);
  ASSERT_EQ(values.size(), 3u);
  EXPECT_EQ(values[0], 1.0);
  EXPECT_EQ(values[2], 1.0 / 3);
  EXPECT_DOUBLE_EQ(values[1], 2.0 / 3);
}

TEST(NumpyCompatTest, LinspaceOfOneOrNoPoints) {
  EXPECT_EQ(Linspace(5.0, 9.0, 1), std::vector<double>{5.0});
  EXPECT_TRUE(Linspace(5.0, 9.0, 0).empty());
}

TEST(NumpyCompatTest, LinspaceComputesStartPlusIndexTimesStep) {
  // numpy: 0 + 2 * (999 / 4) = 499.5 exactly.
  EXPECT_EQ(Linspace(0, 999, 5)[2], 499.5);
}

TEST(NumpyCompatTest, ArangeStepsByTheFirstDifference) {
  // np.arange(1.0, 0.0, -0.1).tolist() (numpy 1.24).
  const std::vector<double> expected = {1.0,
                                        0.9,
                                        0.8,
                                        0.7000000000000001,
                                        0.6000000000000001,
                                        0.5000000000000001,
                                        0.40000000000000013,
                                        0.30000000000000016,
                                        0.20000000000000018,
                                        0.1000000000000002};
  EXPECT_EQ(Arange(1.0, 0.0, -0.1), expected);
  // ceil(1000 / (1000 / 19)) = 19 values, the last 52.63...
  EXPECT_EQ(Arange(1000, 0, -1000.0 / 19).size(), 19u);
  EXPECT_TRUE(Arange(0, 1, -1).empty());
}

TEST(NumpyCompatTest, RoundHalfToEven) {
  EXPECT_EQ(RoundHalfToEven(0.5), 0.0);
  EXPECT_EQ(RoundHalfToEven(1.5), 2.0);
  EXPECT_EQ(RoundHalfToEven(2.5), 2.0);
  EXPECT_EQ(RoundHalfToEven(499.5), 500.0);
  EXPECT_EQ(RoundHalfToEven(-2.5), -2.0);
  EXPECT_EQ(RoundHalfToEven(2.4), 2.0);
  EXPECT_EQ(RoundHalfToEven(2.6), 3.0);
}

}  // namespace
}  // namespace ditserve::schedulers
