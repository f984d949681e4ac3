#ifndef DITSERVE_CORE_BASE_OPENMP_WAIT_POLICY_H_
#define DITSERVE_CORE_BASE_OPENMP_WAIT_POLICY_H_

#include <string>

namespace ditserve::base {

// Runs this program again (execve of /proc/self/exe, same arguments, same
// process id) with OMP_WAIT_POLICY=PASSIVE added to its environment, unless
// the environment already sets OMP_WAIT_POLICY or GOMP_SPINCOUNT.
//
// Why: by default LibTorch's OpenMP workers spin for a while after every
// parallel region, and OpenBLAS runs its own worker threads beside them. With
// --threads 2 on two cores the spinning workers took the cores from OpenBLAS's
// and every forward ran up to twice as slow as with one thread (README,
// "Against diffusers"). libgomp reads the policy once, when it loads, before
// main runs; exec is the only way to set it for this process.
//
// Call first in main, before anything that must not happen twice. Returns
// only when no exec was needed or the exec failed (OpenMpWaitPolicy says
// which).
void RestartWithSleepingOpenMpWorkers(char** argv);

// For the start-up log: how OpenMP workers wait, and what decided it.
std::string OpenMpWaitPolicy();

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_OPENMP_WAIT_POLICY_H_
