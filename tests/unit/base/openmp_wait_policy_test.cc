#include "core/base/openmp_wait_policy.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace ditserve::base {
namespace {

class OpenMpWaitPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv("OMP_WAIT_POLICY");
    ::unsetenv("GOMP_SPINCOUNT");
  }
  void TearDown() override { SetUp(); }
};

TEST_F(OpenMpWaitPolicyTest, SaysLibgompsDefaultWhenTheEnvironmentIsSilent) {
  EXPECT_EQ(OpenMpWaitPolicy(),
            "OpenMP workers spin briefly between parallel regions, then "
            "sleep (libgomp's default)");
}

TEST_F(OpenMpWaitPolicyTest, NamesThePolicyTheEnvironmentSets) {
  ::setenv("GOMP_SPINCOUNT", "1000", 1);
  EXPECT_EQ(OpenMpWaitPolicy(), "OpenMP workers wait with GOMP_SPINCOUNT=1000");
  // libgomp takes the policy before the spin count.
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  EXPECT_EQ(OpenMpWaitPolicy(),
            "OpenMP workers wait with OMP_WAIT_POLICY=PASSIVE");
}

}  // namespace
}  // namespace ditserve::base
