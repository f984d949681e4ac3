#include "core/dist/rendezvous.h"

#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
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

// The one rank of a group, on a free port.
absl::StatusOr<std::unique_ptr<Rendezvous>> ConnectAlone(
    const RendezvousOptions& options) {
  ASSIGN_OR_RETURN(const int port, local_cluster::PickFreePort());
  return Rendezvous::Connect({.rank = 0,
                              .world_size = 1,
                              .local_rank = 0,
                              .master_addr = "127.0.0.1",
                              .master_port = port},
                             options, {});
}

TEST(RendezvousTest, SingleRankFormsWorldControlAndDataGroups) {
  absl::StatusOr<std::unique_ptr<Rendezvous>> rendezvous = ConnectAlone({});
  ASSERT_TRUE(rendezvous.ok()) << rendezvous.status();
  EXPECT_EQ((*rendezvous)->world()->getSize(), 1);
  EXPECT_EQ((*rendezvous)->control()->getSize(), 1);
  EXPECT_NE((*rendezvous)->control(), (*rendezvous)->world());
  EXPECT_TRUE((*rendezvous)->watchdog().FindLostRanks().empty());
}

int ThreadsOfThisProcess() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "Threads:")) {
      return std::stoi(line.substr(std::strlen("Threads:")));
    }
  }
  return -1;
}

// One generation of a one-rank group with two data groups beside its world
// and control groups, as a mesh forms them, abandoned as after a failure.
void FormAndAbandonAGeneration(const RendezvousOptions& options) {
  absl::StatusOr<std::unique_ptr<Rendezvous>> rendezvous =
      ConnectAlone(options);
  ASSERT_TRUE(rendezvous.ok()) << rendezvous.status();
  ASSERT_TRUE((*rendezvous)->NewGlooGroup("sp", 0, 1).ok());
  ASSERT_TRUE((*rendezvous)->NewDataGroup("dp", 0, 1).ok());
  (*rendezvous)->Abandon();
}

// Waits up to 10 s for the thread count to fall to `most`; returns it.
int ThreadsOnceAtMost(int most) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int threads = ThreadsOfThisProcess();
  while (threads > most && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    threads = ThreadsOfThisProcess();
  }
  return threads;
}

// A rank that crash-loops makes the host abandon one generation after
// another: their groups' threads (and sockets) must not pile up.
TEST(RendezvousTest, AbandonedGenerationsGroupsAreDroppedAfterTheirTimeout) {
  RendezvousOptions options;
  options.collective_timeout = std::chrono::milliseconds(300);
  // LibTorch and Gloo start threads of their own once; those stay.
  FormAndAbandonAGeneration(options);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const int settled = ThreadsOfThisProcess();
  for (int generation = 0; generation < 3; ++generation) {
    FormAndAbandonAGeneration(options);
  }
  EXPECT_LE(ThreadsOnceAtMost(settled), settled);
}

}  // namespace
}  // namespace ditserve::dist
