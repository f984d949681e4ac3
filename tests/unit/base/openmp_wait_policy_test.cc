#include "core/base/openmp_wait_policy.h"

#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::base {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The probe's stdout and stderr, run by the shell with `environment` (env's
// arguments) and two arguments the restart must keep.
std::string RunProbe(const std::string& environment) {
  const std::string command = "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT " +
                              environment + " " + DITSERVE_OPENMP_PROBE +
                              " first 'two words' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  std::string output;
  char buffer[4096];
  size_t count = 0;
  while ((count = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    output.append(buffer, count);
  }
  ::pclose(pipe);
  return output;
}

TEST(OpenMpWaitPolicyTest, RestartsSoLibgompTakesThePassivePolicy) {
  const std::string output = RunProbe("");
  EXPECT_THAT(output, HasSubstr("GOMP_SPINCOUNT = '0'"));
  EXPECT_THAT(output, HasSubstr("log: OpenMP workers wait with "
                                "OMP_WAIT_POLICY=PASSIVE"));
  EXPECT_THAT(output, HasSubstr("argument: first\nargument: two words\n"));
}

TEST(OpenMpWaitPolicyTest, LeavesAPolicyFromTheEnvironmentAlone) {
  const std::string output = RunProbe("OMP_WAIT_POLICY=ACTIVE");
  EXPECT_THAT(output, HasSubstr("OMP_WAIT_POLICY = 'ACTIVE'"));
  EXPECT_THAT(output, HasSubstr("log: OpenMP workers wait with "
                                "OMP_WAIT_POLICY=ACTIVE"));
}

TEST(OpenMpWaitPolicyTest, LeavesASpinCountFromTheEnvironmentAlone) {
  const std::string output = RunProbe("GOMP_SPINCOUNT=1000");
  EXPECT_THAT(output, HasSubstr("GOMP_SPINCOUNT = '1000'"));
  EXPECT_THAT(output, Not(HasSubstr("OMP_WAIT_POLICY=PASSIVE")));
  EXPECT_THAT(output,
              HasSubstr("log: OpenMP workers wait with GOMP_SPINCOUNT=1000"));
}

}  // namespace
}  // namespace ditserve::base
