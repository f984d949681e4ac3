#include "core/base/openmp_wait_policy.h"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ditserve::base {
namespace {

constexpr char kPolicyVariable[] = "OMP_WAIT_POLICY";
constexpr char kSpinVariable[] = "GOMP_SPINCOUNT";
constexpr char kSleepingPolicy[] = "OMP_WAIT_POLICY=PASSIVE";

}  // namespace

void RestartWithSleepingOpenMpWorkers(char** argv) {
  if (std::getenv(kPolicyVariable) != nullptr ||
      std::getenv(kSpinVariable) != nullptr) {
    return;
  }
  // The variable goes into the new image's environment only: when execve
  // fails this process goes on with the policy libgomp already took, and
  // its environment still says so.
  std::vector<char*> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    environment.push_back(*entry);
  }
  std::string sleeping = kSleepingPolicy;
  environment.push_back(sleeping.data());
  environment.push_back(nullptr);
  ::execve("/proc/self/exe", argv, environment.data());
}

std::string OpenMpWaitPolicy() {
  if (const char* policy = std::getenv(kPolicyVariable)) {
    return absl::StrCat("OpenMP workers wait with ", kPolicyVariable, "=",
                        policy);
  }
  if (const char* spins = std::getenv(kSpinVariable)) {
    return absl::StrCat("OpenMP workers wait with ", kSpinVariable, "=", spins);
  }
  return absl::StrCat("OpenMP workers spin between parallel regions: ",
                      "the restart with ", kSleepingPolicy, " failed");
}

}  // namespace ditserve::base
