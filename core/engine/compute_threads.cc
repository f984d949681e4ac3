#include "core/engine/compute_threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

namespace ditserve::engine {
namespace {

// Looked up at run time: which BLAS LibTorch uses is Debian's alternatives
// choice, and only OpenBLAS has these functions.
template <typename Fn>
Fn OpenBlasFunction(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

void SetComputeThreads(int threads) {
  // Setting LibTorch's count, even to the one it has, rebuilds its
  // pthreadpool, and the new pool's worker spin-waits for about 100 ms
  // before it sleeps. A benchmark worker that sets its count per request
  // lost a core to it for most of every 2-thread VAE decode.
  if (at::get_num_threads() != threads) at::set_num_threads(threads);
  auto set = OpenBlasFunction<void (*)(int)>("openblas_set_num_threads");
  if (set != nullptr && BlasThreads() != threads) set(threads);
}

int BlasThreads() {
  auto get = OpenBlasFunction<int (*)()>("openblas_get_num_threads");
  return get != nullptr ? get() : 0;
}

}  // namespace ditserve::engine
