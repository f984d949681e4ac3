#include "core/dist/startup_agreement.h"

#include <chrono>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::dist {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

v1::StartupFacts Facts(
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  v1::StartupFacts facts;
  for (const auto& [name, value] : pairs) {
    v1::StartupFact* fact = facts.add_facts();
    fact->set_name(name);
    fact->set_value(value);
  }
  return facts;
}

const v1::StartupFacts kHost =
    Facts({{"parallel.dp_degree", "2"}, {"parallel.ulysses_degree", "1"}});

TEST(DescribeDisagreementTest, EqualFactsAgree) {
  EXPECT_THAT(DescribeDisagreement(1, kHost, kHost), IsEmpty());
}

TEST(DescribeDisagreementTest, NamesEveryDifferingFieldWithBothValues) {
  EXPECT_THAT(
      DescribeDisagreement(1,
                           Facts({{"parallel.dp_degree", "1"},
                                  {"parallel.ulysses_degree", "2"}}),
                           kHost),
      ElementsAre("parallel.dp_degree is 1 on rank 1 and 2 on rank 0",
                  "parallel.ulysses_degree is 2 on rank 1 and 1 on rank 0"));
}

TEST(DescribeDisagreementTest, FieldsOnOneSideOnlyReadAbsent) {
  EXPECT_THAT(
      DescribeDisagreement(
          3, Facts({{"parallel.dp_degree", "2"}, {"dtype", "bfloat16"}}),
          kHost),
      ElementsAre("parallel.ulysses_degree is (absent) on rank 3 and 1 on "
                  "rank 0",
                  "dtype is bfloat16 on rank 3 and (absent) on rank 0"));
}

// Runs AgreeOnStartup for every rank of `facts` on threads sharing one
// store, as the ranks' processes share rank 0's TCPStore.
std::vector<absl::Status> AgreeOnThreads(
    const std::vector<v1::StartupFacts>& facts,
    std::chrono::milliseconds timeout) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  const int world_size = static_cast<int>(facts.size());
  std::vector<absl::Status> verdicts(world_size);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < world_size; ++rank) {
    ranks.emplace_back([&, rank] {
      verdicts[rank] = AgreeOnStartup(*store, rank, world_size, facts[rank],
                                      {.timeout = timeout});
    });
  }
  for (std::thread& rank : ranks) rank.join();
  return verdicts;
}

TEST(AgreeOnStartupTest, RanksWithEqualFactsAgree) {
  for (const absl::Status& verdict :
       AgreeOnThreads({kHost, kHost, kHost}, std::chrono::seconds(10))) {
    EXPECT_TRUE(verdict.ok()) << verdict;
  }
}

TEST(AgreeOnStartupTest, EveryRankFailsNamingTheDifferingRankAndField) {
  const v1::StartupFacts other =
      Facts({{"parallel.dp_degree", "1"}, {"parallel.ulysses_degree", "2"}});
  const auto start = std::chrono::steady_clock::now();
  const std::vector<absl::Status> verdicts =
      AgreeOnThreads({kHost, kHost, other}, std::chrono::seconds(30));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  for (const absl::Status& verdict : verdicts) {
    EXPECT_EQ(verdict.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(
        std::string(verdict.message()),
        HasSubstr("rank 2 was started differently from rank 0 (the host): "
                  "parallel.dp_degree is 1 on rank 2 and 2 on rank 0; "
                  "parallel.ulysses_degree is 2 on rank 2 and 1 on rank 0"));
  }
}

TEST(AgreeOnStartupTest, DifferentWorldSizesAreNamed) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  absl::Status worker;
  std::thread rank1([&] {
    worker = AgreeOnStartup(*store, 1, 3, kHost,
                            {.timeout = std::chrono::seconds(10)});
  });
  const absl::Status host = AgreeOnStartup(
      *store, 0, 2, kHost, {.timeout = std::chrono::seconds(10)});
  rank1.join();
  for (const absl::Status& verdict : {host, worker}) {
    EXPECT_EQ(verdict.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(verdict.message()),
                HasSubstr("world_size is 3 on rank 1 and 2 on rank 0"));
  }
}

TEST(AgreeOnStartupTest, ARankThatNeverPublishesIsUnavailableAfterTheTimeout) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  const auto start = std::chrono::steady_clock::now();
  const absl::Status host = AgreeOnStartup(
      *store, 0, 2, kHost, {.timeout = std::chrono::milliseconds(1000)});
  // Nobody will read a verdict, so rank 0 does not linger for one: a host
  // re-forming the group opens its next attempt at once.
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(1800));
  EXPECT_EQ(host.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(host.message()),
              HasSubstr("the start-up facts of rank 1 did not arrive within "
                        "1000 ms"));
}

}  // namespace
}  // namespace ditserve::dist
