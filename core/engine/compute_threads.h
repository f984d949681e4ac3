#ifndef DITSERVE_CORE_ENGINE_COMPUTE_THREADS_H_
#define DITSERVE_CORE_ENGINE_COMPUTE_THREADS_H_

namespace ditserve::engine {

// Limits this process's CPU compute to `threads` threads: LibTorch's
// intra-op pool and the BLAS library's own pool. OpenBLAS sizes its pool by
// the machine's cores when it loads and LibTorch never resizes it, so without
// this every rank on a machine runs (and spin-waits) one BLAS thread per core
// whatever --threads says.
void SetComputeThreads(int threads);

// The BLAS library's thread count, or 0 when it does not say (not OpenBLAS).
int BlasThreads();

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_COMPUTE_THREADS_H_
