// Sequence parallelism as a user meets it: ditserve-host and ditserve-worker
// on loopback with Ulysses, Ring and both (and data parallel on top), each
// returning the latents a single rank returns for the same request; and the
// parallel method FLUX does not run yet refused at start-up.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/integration/serving/serving_cluster.h"
#include "tests/support/rank_launcher.h"

namespace ditserve::testing {
namespace {

constexpr double kCallSeconds = 120;

// Largest |parallel - single| allowed in any latent value. Both runs compute
// the same float32 math; only the order of sums differs (attention over
// shards merged by all-to-all or log-sum-exp, matmuls over fewer rows,
// batches split by dp), which moves a value by a few float32 ulps per
// forward: at most 7.2e-7 measured over these cases, for latents of
// magnitude up to ~4 (ulp 4.8e-7). A shard with wrong weights, positions,
// an unmasked padded key or a misplaced shard moves values by 1e-2 or more.
constexpr float kLatentTolerance = 1e-5F;

// Three prompts (dp groups of 2 and 1 under dp 2) of 80×48 pixels: a 10×6
// latent grid, 5×3 = 15 image tokens, which with 32 text tokens makes a
// joint sequence of 47: no sp degree divides it, so every case pads and
// masks, and a non-square image checks the position ids of the shards.
v1::GenerateRequest Request() {
  v1::GenerateRequest request = SmallRequest("a lighthouse at dusk");
  request.set_height(80);
  request.set_width(48);
  request.set_max_sequence_length(32);
  request.set_num_inference_steps(2);
  request.add_prompt("a fox in the snow");
  request.add_prompt("three red boats on a calm lake");
  request.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
  return request;
}

// Starts a group, serves `request` once and stops the group.
absl::StatusOr<v1::GenerateResponse> ServeOnce(
    const ClusterOptions& options, const v1::GenerateRequest& request) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(options);
  if (!cluster.ok()) return cluster.status();
  return (*cluster)->Generate(request, kCallSeconds);
}

struct ParallelCase {
  int dp = 1;
  int ulysses = 1;
  int ring = 1;

  int world() const { return dp * ulysses * ring; }
  std::string Name() const {
    return absl::StrCat("dp", dp, "_ulysses", ulysses, "_ring", ring);
  }
};

class SequenceParallelServingTest
    : public ::testing::TestWithParam<ParallelCase> {};

TEST_P(SequenceParallelServingTest, LatentsEqualASingleRanksWithinTolerance) {
  const ParallelCase& parallel = GetParam();
  const v1::GenerateRequest request = Request();
  absl::StatusOr<v1::GenerateResponse> single =
      ServeOnce({.world_size = 1}, request);
  ASSERT_TRUE(single.ok()) << single.status();
  absl::StatusOr<v1::GenerateResponse> split = ServeOnce(
      {.world_size = parallel.world(),
       .rank_flags = {absl::StrCat("--dp_degree=", parallel.dp),
                      absl::StrCat("--ulysses_degree=", parallel.ulysses),
                      absl::StrCat("--ring_degree=", parallel.ring)}},
      request);
  ASSERT_TRUE(split.ok()) << split.status();

  const v1::InputConfig& config = split->config();
  EXPECT_EQ(config.parallel().ulysses_degree(), parallel.ulysses);
  EXPECT_EQ(config.parallel().ring_degree(), parallel.ring);
  EXPECT_EQ(config.parallel().dp_degree(), parallel.dp);
  const int sp = parallel.ulysses * parallel.ring;
  EXPECT_EQ(config.shapes().sequence_tokens(), 47);
  EXPECT_EQ(config.shapes().padded_sequence_tokens(), 48);
  EXPECT_EQ(config.shapes().shard_tokens(), 48 / sp);

  ASSERT_EQ(single->images_size(), 3);
  ASSERT_EQ(split->images_size(), 3);
  float max_error = 0;
  for (int image = 0; image < 3; ++image) {
    const std::vector<float> expected = LatentFloats(single->images(image));
    const std::vector<float> actual = LatentFloats(split->images(image));
    ASSERT_EQ(actual.size(), expected.size());
    ASSERT_FALSE(expected.empty());
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_TRUE(std::isfinite(actual[i]))
          << "image " << image << " [" << i << "] is " << actual[i];
      max_error = std::max(max_error, std::abs(actual[i] - expected[i]));
    }
  }
  std::cout << parallel.Name() << ": max |latent - single rank| = " << max_error
            << std::endl;
  RecordProperty("max_abs_error", std::to_string(max_error));
  EXPECT_LE(max_error, kLatentTolerance) << parallel.Name();
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, SequenceParallelServingTest,
    ::testing::Values(ParallelCase{.ulysses = 2}, ParallelCase{.ring = 2},
                      ParallelCase{.ulysses = 4}, ParallelCase{.ring = 4},
                      ParallelCase{.ulysses = 2, .ring = 2},
                      ParallelCase{.dp = 2, .ulysses = 2},
                      ParallelCase{.dp = 2, .ring = 2}),
    [](const ::testing::TestParamInfo<ParallelCase>& info) {
      return info.param.Name();
    });

TEST(FluxParallelFlagsTest, PipeFusionIsRefusedAtStartUpNamingTheFlag) {
  absl::StatusOr<std::unique_ptr<RankLauncher>> ranks = RankLauncher::Start(
      DITSERVE_RANK_DISPATCH,
      {absl::StrCat("--model_cache_dir=", DITSERVE_TEST_MODEL_CACHE),
       "--threads=1", "--pipefusion_degree=2"},
      /*world_size=*/2,
      {absl::StrCat("DITSERVE_HOST=", DITSERVE_HOST_BINARY),
       absl::StrCat("DITSERVE_WORKER=", DITSERVE_WORKER_BINARY),
       "DITSERVE_HOST_ARGS=--grpc_port=0 --metrics_port=0 "
       "--listen=127.0.0.1"});
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  for (const RankExit& exit : (*ranks)->WaitAll(std::chrono::seconds(60))) {
    EXPECT_FALSE(exit.timed_out) << "rank " << exit.rank;
    EXPECT_EQ(exit.exit_code, 1) << "rank " << exit.rank << ":\n"
                                 << (*ranks)->Output(exit.rank);
    EXPECT_THAT((*ranks)->Output(exit.rank),
                ::testing::HasSubstr("UNIMPLEMENTED: --pipefusion_degree 2: "
                                     "this build runs FLUX with data "
                                     "parallelism (--dp_degree) and sequence "
                                     "parallelism"));
  }
}

}  // namespace
}  // namespace ditserve::testing
