#include "core/models/layers/sincos_position_table.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace ditserve::models {
namespace {

TEST(SincosPositionTableTest, OriginPatchIsSinZeroAndCosOne) {
  const at::Tensor table = SincosPositionTable2d(8, 2, 3, 2.0, 1.0);
  ASSERT_EQ(table.sizes(), (std::vector<int64_t>{6, 8}));
  // Per axis: [sin x 2, cos x 2].
  const at::Tensor expected =
      torch::tensor({0.0F, 0.0F, 1.0F, 1.0F, 0.0F, 0.0F, 1.0F, 1.0F});
  EXPECT_TRUE(table[0].equal(expected));
}

TEST(SincosPositionTableTest, FirstHalfEncodesTheColumnSecondHalfTheRow) {
  const at::Tensor table = SincosPositionTable2d(8, 2, 3, 3.0, 1.0);
  // Patch (row 1, column 2) is row-major index 5.
  const at::Tensor patch = table[5];
  // base_size 3 over 3 columns: column 2 sits at coordinate 2; the row grid
  // (2 rows stretched to 3) puts row 1 at 1.5. Frequencies 1 and 1/100.
  EXPECT_NEAR(patch[0].item<float>(), std::sin(2.0), 1e-6);
  EXPECT_NEAR(patch[1].item<float>(), std::sin(0.02), 1e-6);
  EXPECT_NEAR(patch[2].item<float>(), std::cos(2.0), 1e-6);
  EXPECT_NEAR(patch[4].item<float>(), std::sin(1.5), 1e-6);
  EXPECT_NEAR(patch[6].item<float>(), std::cos(1.5), 1e-6);
}

TEST(SincosPositionTableTest, InterpolationScaleShrinksTheCoordinates) {
  const at::Tensor scaled = SincosPositionTable2d(8, 4, 4, 4.0, 2.0);
  const at::Tensor half_grid = SincosPositionTable2d(8, 4, 4, 2.0, 1.0);
  EXPECT_TRUE(torch::allclose(scaled, half_grid));
}

}  // namespace
}  // namespace ditserve::models
