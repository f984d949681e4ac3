// Data and sequence parallelism as a user meets them: ditserve-host and
// ditserve-worker on loopback with data parallel, Ulysses, Ring, both, and
// data parallel on top of either, each returning the latents a single rank
// returns for the same request.

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ClusterOptions;
using ::ditserve::local_cluster::kParallelLatentTolerance;
using ::ditserve::local_cluster::LatentFloats;
using ::ditserve::local_cluster::ParallelParityRequest;
using ::ditserve::local_cluster::ServingCluster;

constexpr double kCallSeconds = 120;

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

// ctest lists each case by this name rather than by its bytes.
void PrintTo(const ParallelCase& parallel, std::ostream* out) {
  *out << parallel.Name();
}

class SequenceParallelServingTest
    : public ::testing::TestWithParam<ParallelCase> {};

TEST_P(SequenceParallelServingTest, LatentsEqualASingleRanksWithinTolerance) {
  const ParallelCase& parallel = GetParam();
  const v1::GenerateRequest request = ParallelParityRequest();
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
  // Padded to a multiple of sp: 47 stays 47 without sequence parallelism.
  const int padded = sp == 1 ? 47 : 48;
  EXPECT_EQ(config.shapes().padded_sequence_tokens(), padded);
  EXPECT_EQ(config.shapes().shard_tokens(), padded / sp);

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
  EXPECT_LE(max_error, kParallelLatentTolerance) << parallel.Name();
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, SequenceParallelServingTest,
    ::testing::Values(ParallelCase{.dp = 2}, ParallelCase{.dp = 4},
                      ParallelCase{.ulysses = 2}, ParallelCase{.ring = 2},
                      ParallelCase{.ulysses = 4}, ParallelCase{.ring = 4},
                      ParallelCase{.ulysses = 2, .ring = 2},
                      ParallelCase{.dp = 2, .ulysses = 2},
                      ParallelCase{.dp = 2, .ring = 2}),
    [](const ::testing::TestParamInfo<ParallelCase>& info) {
      return info.param.Name();
    });

}  // namespace
}  // namespace ditserve::testing
