#ifndef DITSERVE_CORE_SCHEDULERS_NUMPY_COMPAT_H_
#define DITSERVE_CORE_SCHEDULERS_NUMPY_COMPAT_H_

// The numpy operations the diffusers schedulers and pipelines build their
// schedules with, reproduced bit for bit: schedules are compared exactly
// (integer timesteps) or to 1e-6, so "almost linspace" is not enough.

#include <cstdint>
#include <vector>

namespace ditserve::schedulers {

// np.linspace(start, stop, num) in float64: start + i * step, last = stop.
// The FLUX pipeline's sigmas are Linspace(1.0, 1.0 / n, n).
std::vector<double> Linspace(double start, double stop, int64_t num);

// np.round: half to even.
double RoundHalfToEven(double value);

}  // namespace ditserve::schedulers

#endif  // DITSERVE_CORE_SCHEDULERS_NUMPY_COMPAT_H_
