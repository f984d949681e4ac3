#include "core/dist/rendezvous.h"

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/local_cluster/rank_launcher.h"

namespace ditserve::dist {
namespace {

using ::testing::HasSubstr;

TEST(RendezvousTest, WorkerWithoutAStoreFailsNamingTheAddressWithinTheTimeout) {
  absl::StatusOr<int> port = local_cluster::PickFreePort();
  ASSERT_TRUE(port.ok()) << port.status();
  RendezvousOptions options;
  options.connect_timeout = std::chrono::milliseconds(1500);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<Rendezvous>> rendezvous =
      Rendezvous::Connect({.rank = 1,
                           .world_size = 2,
                           .local_rank = 1,
                           .master_addr = "127.0.0.1",
                           .master_port = *port},
                          options, {});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ASSERT_FALSE(rendezvous.ok());
  EXPECT_EQ(rendezvous.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(rendezvous.status().message()),
              HasSubstr(absl::StrCat("rank 1 could not reach the store at "
                                     "MASTER_ADDR:PORT 127.0.0.1:",
                                     *port)));
}

TEST(RendezvousTest, SingleRankFormsWorldControlAndDataGroups) {
  absl::StatusOr<int> port = local_cluster::PickFreePort();
  ASSERT_TRUE(port.ok()) << port.status();
  absl::StatusOr<std::unique_ptr<Rendezvous>> rendezvous =
      Rendezvous::Connect({.rank = 0,
                           .world_size = 1,
                           .local_rank = 0,
                           .master_addr = "127.0.0.1",
                           .master_port = *port},
                          {}, {});
  ASSERT_TRUE(rendezvous.ok()) << rendezvous.status();
  EXPECT_EQ((*rendezvous)->world()->getSize(), 1);
  EXPECT_EQ((*rendezvous)->control()->getSize(), 1);
  EXPECT_NE((*rendezvous)->control(), (*rendezvous)->world());
  EXPECT_TRUE((*rendezvous)->watchdog().FindLostRanks().empty());
}

}  // namespace
}  // namespace ditserve::dist
