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

// np.arange(start, stop, step) in float64: ceil((stop - start) / step)
// values start + i * delta, where delta = (start + step) - start (numpy's
// fill), which may differ from step in its last bits. The "trailing"
// timestep spacings are np.round(Arange(n_train, 0, -n_train / steps)) - 1.
std::vector<double> Arange(double start, double stop, double step);

// np.round: half to even.
double RoundHalfToEven(double value);

}  // namespace ditserve::schedulers

#endif  // DITSERVE_CORE_SCHEDULERS_NUMPY_COMPAT_H_
