#ifndef DITSERVE_CORE_BASE_OPENMP_WAIT_POLICY_H_
#define DITSERVE_CORE_BASE_OPENMP_WAIT_POLICY_H_

#include <string>

namespace ditserve::base {

// For the start-up log: how LibTorch's OpenMP workers wait between parallel
// regions, as libgomp read it from the environment when it loaded.
//
// ditserve leaves libgomp's default (spin for a few milliseconds, then
// sleep). Every float32 product and convolution on the CPU runs on that one
// OpenMP pool (oneDNN, core/models/layers/cpu_gemm.h), so a spinning worker
// no longer takes a core another pool needs, and workers that slept after
// every region made each 2-thread forward and decode pay a wake-up per
// region: the VAE decode at 256² took 92 instead of 67 ms (README, "Against
// diffusers"). OMP_WAIT_POLICY or GOMP_SPINCOUNT still set it.
std::string OpenMpWaitPolicy();

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_OPENMP_WAIT_POLICY_H_
