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
  at::set_num_threads(threads);
  if (auto set = OpenBlasFunction<void (*)(int)>("openblas_set_num_threads")) {
    set(threads);
  }
}

int BlasThreads() {
  auto get = OpenBlasFunction<int (*)()>("openblas_get_num_threads");
  return get != nullptr ? get() : 0;
}

}  // namespace ditserve::engine
