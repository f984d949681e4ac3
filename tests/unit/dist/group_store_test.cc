#include "core/dist/group_store.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <vector>

#include "absl/status/status.h"
#include "core/dist/run_failure_board.h"
#include "core/dist/store_wait.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/local_cluster/rank_launcher.h"

namespace ditserve::dist {
namespace {

using ::testing::HasSubstr;

constexpr std::chrono::milliseconds kTimeout{5000};

RankEnv Rank(int rank, int port) {
  return {.rank = rank,
          .world_size = 2,
          .local_rank = rank,
          .master_addr = "127.0.0.1",
          .master_port = port};
}

TEST(GroupStoreTest, AWorkerJoinsOnlyAGenerationThatIsStillForming) {
  absl::StatusOr<int> port = local_cluster::PickFreePort();
  ASSERT_TRUE(port.ok()) << port.status();
  absl::StatusOr<std::shared_ptr<GroupStore>> host =
      GroupStore::Connect(Rank(0, *port), kTimeout);
  ASSERT_TRUE(host.ok()) << host.status();
  absl::StatusOr<std::shared_ptr<GroupStore>> worker =
      GroupStore::Connect(Rank(1, *port), kTimeout);
  ASSERT_TRUE(worker.ok()) << worker.status();

  EXPECT_EQ((*worker)->GenerationToJoin(-1, kTimeout).value_or(-1), 0);
  ASSERT_TRUE((*host)->MarkFormed(0).ok());
  // Generation 0 is whole: a process started as rank 1 now must wait.
  const absl::StatusOr<int64_t> refused =
      (*worker)->GenerationToJoin(-1, std::chrono::milliseconds(200));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("another process runs as RANK=1"));
  EXPECT_EQ((*host)->OpenNext().value_or(-1), 1);
  EXPECT_EQ((*worker)->GenerationToJoin(-1, kTimeout).value_or(-1), 1);
  EXPECT_EQ((*worker)->GenerationToJoin(0, kTimeout).value_or(-1), 1);
  // A survivor that left generation 1 while rank 0 still tries to form it
  // waits past its timeout, until rank 0 gives up and opens the next.
  std::thread host_gives_up([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    EXPECT_EQ((*host)->OpenNext().value_or(-1), 2);
  });
  EXPECT_EQ((*worker)
                ->GenerationToJoin(1, std::chrono::milliseconds(200))
                .value_or(-1),
            2);
  host_gives_up.join();
  // A formed generation is not waited on past the timeout.
  ASSERT_TRUE((*host)->MarkFormed(2).ok());
  EXPECT_FALSE(
      (*worker)->GenerationToJoin(2, std::chrono::milliseconds(200)).ok());
}

TEST(GroupStoreTest, GenerationsKeepTheirKeysApart) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  ScopeToGeneration(store, 0)->set("facts", std::vector<uint8_t>{1});
  EXPECT_TRUE(ScopeToGeneration(store, 0)->check({"facts"}));
  EXPECT_FALSE(ScopeToGeneration(store, 1)->check({"facts"}));
  EXPECT_EQ(ReadCurrentGeneration(*store), 0);
  EXPECT_EQ(OpenNextGeneration(*store), 1);
  EXPECT_EQ(ReadCurrentGeneration(*store), 1);
}

TEST(GroupStoreTest, ForgettingAGenerationDeletesEveryKeyWrittenInIt) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  OpenNextGeneration(*store);
  ScopeToGeneration(store, 1)->set("formed", std::vector<uint8_t>{1});
  const int64_t kept = store->getNumKeys();

  const c10::intrusive_ptr<c10d::Store> scoped = ScopeToGeneration(store, 0);
  scoped->set("ditserve/startup/facts/1", std::vector<uint8_t>{1});
  scoped->add("ditserve/heartbeat/1", 1);
  // As Gloo's rendezvous writes: through a prefix over the scoped store.
  c10d::PrefixStore("world", scoped).set("0/1", std::vector<uint8_t>{2});
  // As the watchdog writes: through a connection of its own.
  ScopeToGeneration(store, 0)->add("ditserve/heartbeat/1", 0);
  ScopeToGeneration(store, 0)->set("ditserve/exited/1",
                                   std::vector<uint8_t>{1});
  // The last two runs' posts, which Engine::Run never forgets.
  RunFailureBoard board(scoped, /*world_size=*/2);
  ASSERT_TRUE(board.Post(8, 1, absl::InternalError("a")).ok());
  ASSERT_TRUE(board.Post(9, 0, absl::InternalError("b")).ok());
  ASSERT_GT(store->getNumKeys(), kept);

  ASSERT_TRUE(ForgetGeneration(store, 0, /*world_size=*/2).ok());
  EXPECT_EQ(store->getNumKeys(), kept);
  EXPECT_TRUE(ScopeToGeneration(store, 1)->check({"formed"}));
  EXPECT_EQ(ReadCurrentGeneration(*store), 1);
}

TEST(StoreWaitTest, KeepWaitingEndsTheWaitWithItsStatus) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  int asked = 0;
  const auto start = std::chrono::steady_clock::now();
  const absl::Status status = WaitForKeys(
      *store, {"never"},
      {.timeout = std::chrono::seconds(30),
       .keep_waiting =
           [&] {
             return ++asked < 3 ? absl::OkStatus()
                                : absl::UnavailableError("a newer generation");
           }},
      "the key");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(status, absl::UnavailableError("a newer generation"));
}

TEST(StoreWaitTest, MissingKeysAreUnavailableAfterTheTimeout) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  const absl::Status status = WaitForKeys(
      *store, {"never"}, {.timeout = std::chrono::milliseconds(100)},
      "the facts of rank 1");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("the facts of rank 1 did not arrive within 100 ms"));
  store->set("never", std::vector<uint8_t>{1});
  EXPECT_TRUE(WaitForKeys(*store, {"never"}, {}, "the key").ok());
}

}  // namespace
}  // namespace ditserve::dist
