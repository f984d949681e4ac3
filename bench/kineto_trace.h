#ifndef DITSERVE_BENCH_KINETO_TRACE_H_
#define DITSERVE_BENCH_KINETO_TRACE_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace ditserve::bench {

// Runs `op` under LibTorch's Kineto profiler and writes what ran (operators,
// and with `gpu` the kernels and CUDA runtime calls) to `path` as a Chrome
// trace, the format torch.profiler writes for diffusers: the comparison then
// sets both sides' kernels beside each other. Returns `op`'s result.
absl::StatusOr<double> Traced(
    const std::string& path, bool gpu,
    const std::function<absl::StatusOr<double>()>& op);

}  // namespace ditserve::bench

#endif  // DITSERVE_BENCH_KINETO_TRACE_H_
