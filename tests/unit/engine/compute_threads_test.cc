#include "core/engine/compute_threads.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <filesystem>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace ditserve::engine {
namespace {

std::set<std::string> ThreadIds() {
  std::set<std::string> ids;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task")) {
    ids.insert(entry.path().filename().string());
  }
  return ids;
}

// deploy/install-deps.sh selects OpenBLAS (with the reference BLAS matmul is
// ~30x slower), so its pool is there to be limited. A PyTorch wheel's
// LibTorch does its products in the MKL it carries, whose pool LibTorch's
// count sets: there is no OpenBLAS pool.
TEST(ComputeThreadsTest, LimitsLibTorchAndOpenBlasPools) {
  const bool openblas = !at::hasMKL();
  SetComputeThreads(1);
  EXPECT_EQ(at::get_num_threads(), 1);
  if (openblas) {
    EXPECT_EQ(BlasThreads(), 1) << "is libblas.so.3 OpenBLAS?";
  }
  SetComputeThreads(2);
  EXPECT_EQ(at::get_num_threads(), 2);
  if (openblas) {
    EXPECT_EQ(BlasThreads(), 2);
  }
}

// A rebuilt pool replaces its worker threads, and a new worker spin-waits
// beside the computation it was not needed for.
TEST(ComputeThreadsTest, TheCountItAlreadyHasKeepsEveryThread) {
  SetComputeThreads(1);
  SetComputeThreads(2);
  at::parallel_for(0, 1024, 1, [](int64_t, int64_t) {});
  const std::set<std::string> before = ThreadIds();
  SetComputeThreads(2);
  EXPECT_EQ(ThreadIds(), before);
}

}  // namespace
}  // namespace ditserve::engine
