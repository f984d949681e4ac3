// Started by openmp_wait_policy_test.cc: restarts as the servers do, then
// prints its arguments, the start-up log line and what libgomp took.
#include <omp.h>

#include <cstdio>

#include "core/base/openmp_wait_policy.h"

int main(int argc, char** argv) {
  ditserve::base::RestartWithSleepingOpenMpWorkers(argv);
  for (int i = 1; i < argc; ++i) std::printf("argument: %s\n", argv[i]);
  std::printf("log: %s\n", ditserve::base::OpenMpWaitPolicy().c_str());
  std::fflush(stdout);
  // Verbose: GOMP_SPINCOUNT is 0 under the passive policy, 300000 under
  // libgomp's default (whose OMP_WAIT_POLICY line also reads PASSIVE).
  omp_display_env(1);
  return 0;
}
