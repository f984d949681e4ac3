#include "worker/served_parallelism.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/config/parallel_config.h"

namespace ditserve::worker {
namespace {

using ::testing::HasSubstr;

v1::ParallelConfig ParallelOf(const config::ParallelFlags& flags,
                              int world_size) {
  absl::StatusOr<v1::ParallelConfig> parallel =
      config::MakeParallelConfig(flags, world_size);
  EXPECT_TRUE(parallel.ok()) << parallel.status();
  return *parallel;
}

TEST(ServedParallelismTest, EveryMethodRunsAloneOrWithDataAndCfg) {
  for (const config::ParallelFlags& flags :
       {config::ParallelFlags{.dp_degree = 2, .cfg_degree = 2},
        config::ParallelFlags{.cfg_degree = 2, .ulysses_degree = 2},
        config::ParallelFlags{.dp_degree = 2, .ring_degree = 2},
        config::ParallelFlags{.ring_degree = 2, .ulysses_degree = 2},
        config::ParallelFlags{.dp_degree = 2, .pipefusion_degree = 2},
        config::ParallelFlags{.cfg_degree = 2, .pipefusion_degree = 2}}) {
    EXPECT_TRUE(CheckServedParallelism(ParallelOf(flags, 4)).ok());
  }
}

TEST(ServedParallelismTest, PipeFusionWithSequenceParallelIsRefused) {
  const absl::Status status = CheckServedParallelism(
      ParallelOf({.pipefusion_degree = 2, .ring_degree = 2}, 4));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("--pipefusion_degree 2 with --ring_degree 2 × "
                        "--ulysses_degree 1: PipeFusion combined with "
                        "sequence parallelism is not implemented"));
}

}  // namespace
}  // namespace ditserve::worker
