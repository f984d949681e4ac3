#include "core/engine/compute_threads.h"

#include <ATen/Parallel.h>

#include "gtest/gtest.h"

namespace ditserve::engine {
namespace {

// deploy/install-deps.sh selects OpenBLAS (with the reference BLAS matmul is
// ~30x slower), so its pool is there to be limited.
TEST(ComputeThreadsTest, LimitsLibTorchAndOpenBlasPools) {
  SetComputeThreads(1);
  EXPECT_EQ(at::get_num_threads(), 1);
  EXPECT_EQ(BlasThreads(), 1) << "is libblas.so.3 OpenBLAS?";
  SetComputeThreads(2);
  EXPECT_EQ(at::get_num_threads(), 2);
  EXPECT_EQ(BlasThreads(), 2);
}

}  // namespace
}  // namespace ditserve::engine
