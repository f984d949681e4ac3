// Ranks started with different degrees or models must fail start-up in
// seconds, every rank naming the rank, the field and both values, rather
// than hang in the rendezvous or fail the first request.

#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/families/pixart/pixart_defaults.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/serving/tiny_model_cluster.h"
#include "tools/local_cluster/rank_launcher.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ClusterOptions;
using ::ditserve::local_cluster::LaunchRanks;
using ::ditserve::local_cluster::RankExit;
using ::ditserve::local_cluster::RankLauncher;
using ::testing::HasSubstr;

// Well under the 60 s connect timeout the ranks would otherwise wait out.
constexpr std::chrono::seconds kFailWithin{20};

// Starts `options`, waits for every rank to exit and checks that each one
// failed within kFailWithin with `difference` in its log.
void ExpectEveryRankFailsNaming(const ClusterOptions& options,
                                const std::string& difference) {
  absl::StatusOr<std::unique_ptr<RankLauncher>> ranks = LaunchRanks(options);
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  const auto start = std::chrono::steady_clock::now();
  const std::vector<RankExit> exits = (*ranks)->WaitAll(kFailWithin);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  std::cout << "every rank exited after "
            << std::chrono::duration<double>(elapsed).count() << " s\n";
  for (const RankExit& exit : exits) {
    SCOPED_TRACE(::testing::Message() << "rank " << exit.rank << ":\n"
                                      << (*ranks)->Output(exit.rank));
    EXPECT_FALSE(exit.timed_out);
    EXPECT_EQ(exit.exit_code, 1);
    EXPECT_THAT((*ranks)->Output(exit.rank),
                HasSubstr("rank 1 was started differently from rank 0 (the "
                          "host): "));
    EXPECT_THAT((*ranks)->Output(exit.rank), HasSubstr(difference));
  }
}

TEST(StartupAgreementTest, DifferentDegreesFailEveryRankNamingBothValues) {
  ExpectEveryRankFailsNaming(
      {.world_size = 2,
       .host_flags = {"--dp_degree=2"},
       .worker_flags = {"--ulysses_degree=2"}},
      "parallel.dp_degree is 1 on rank 1 and 2 on rank 0; "
      "parallel.ulysses_degree is 2 on rank 1 and 1 on rank 0");
}

TEST(StartupAgreementTest, DifferentModelsFailEveryRankNamingBothModels) {
  const std::string pixart = TinyCheckpoint(families::kPixArtSigmaDefaults);
  ASSERT_FALSE(pixart.empty());
  ExpectEveryRankFailsNaming(
      {.world_size = 2, .worker_flags = {"--model_dir=" + pixart}},
      "model.name is pixart-sigma on rank 1 and flux-dev on rank 0");
}

TEST(StartupAgreementTest, DifferentWorldSizesFailNamingThem) {
  ExpectEveryRankFailsNaming(
      {.world_size = 2, .worker_flags = {"--world_size=3"}},
      "world_size is 3 on rank 1 and 2 on rank 0");
}

// An idle worker whose timeout is shorter than the host's would give up on
// the host's pings, spaced by the host's timeout, and break the group again
// and again.
TEST(StartupAgreementTest, DifferentCollectiveTimeoutsFailNamingThem) {
  ExpectEveryRankFailsNaming(
      {.world_size = 2,
       .host_flags = {"--collective_timeout_s=300", "--ping_interval_s=100"}},
      "collective_timeout_s is 60 on rank 1 and 300 on rank 0");
}

}  // namespace
}  // namespace ditserve::testing
