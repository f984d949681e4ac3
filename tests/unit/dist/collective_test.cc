#include "core/dist/collective.h"

#include <ATen/ATen.h>

#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <vector>

#include "absl/status/status.h"
#include "core/dist/group_store.h"
#include "core/dist/process_group.h"
#include "core/dist/run_failure_board.h"
#include "core/dist/sigpipe.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::dist {
namespace {

using ::testing::HasSubstr;

// Fast heartbeats, so a rank that never beats is lost or hung quickly.
constexpr WatchdogOptions kFastWatchdog{
    .interval = std::chrono::milliseconds(20),
    .lapsed_intervals = 3,
    .hung_after = std::chrono::milliseconds(300)};

// A collective that completed at once.
class CompletedWork : public c10d::Work {
 public:
  CompletedWork() { finish(); }
};

// Watchdogs of the ranks in `beating` of a group of `world_size` sharing one
// in-memory store; the other ranks never beat, as if they died before
// their first heartbeat.
class Heartbeats {
 public:
  Heartbeats(int world_size, const std::vector<int>& beating)
      : store_(c10::make_intrusive<c10d::HashStore>()) {
    for (int rank : beating) {
      watchdogs_.push_back(std::make_unique<Watchdog>(store_, rank, world_size,
                                                      kFastWatchdog,
                                                      /*generation=*/0));
    }
  }

  // The first beating rank's view.
  CollectiveContext Context(
      std::chrono::milliseconds timeout = std::chrono::milliseconds(100),
      std::vector<int> leave_on_failure = {}) {
    return {.group_name = "control",
            .timeout = timeout,
            .watchdog = watchdogs_.front().get(),
            .leave_on_failure = std::move(leave_on_failure)};
  }

  Watchdog& first() { return *watchdogs_.front(); }
  // The beating rank at `index` leaves as a rank does after an error of its
  // own: its watchdog marks it exited and stops.
  void Leave(size_t index) { watchdogs_.at(index).reset(); }

  const c10::intrusive_ptr<c10d::Store>& store() const { return store_; }

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  std::vector<std::unique_ptr<Watchdog>> watchdogs_;
};

TEST(CollectiveTest, CompletedWorkIsOk) {
  Heartbeats heartbeats(1, {0});
  EXPECT_TRUE(RunCollective("broadcast", heartbeats.Context(), [] {
                return c10::make_intrusive<CompletedWork>();
              }).ok());
}

TEST(CollectiveTest, WorkThatNeverCompletesTimesOutWithDeadlineExceeded) {
  Heartbeats heartbeats(1, {0});
  absl::Status status = RunCollective("broadcast", heartbeats.Context(), [] {
    return c10::make_intrusive<c10d::Work>();
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("broadcast on the control group did not complete "
                        "within 100 ms"));
}

TEST(CollectiveTest, WithoutAWatchdogOnlyTheTimeoutEndsTheWait) {
  absl::Status status = RunCollective(
      "broadcast",
      {.group_name = "control", .timeout = std::chrono::milliseconds(100)},
      [] { return c10::make_intrusive<c10d::Work>(); });
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(CollectiveTest, FailureWithALostRankIsUnavailableNamingTheRank) {
  Heartbeats heartbeats(3, {0, 1});
  absl::Status status =
      RunCollective("all-gather", heartbeats.Context(),
                    []() -> c10::intrusive_ptr<c10d::Work> {
                      throw std::runtime_error("Connection closed by peer");
                    });
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("rank 2 lost during all-gather on the control group: "
                        "Connection closed by peer"));
}

TEST(CollectiveTest, SeveralLostRanksAreAllNamed) {
  Heartbeats heartbeats(4, {0, 2});
  absl::Status status = RunCollective("all-gather", heartbeats.Context(), [] {
    return c10::make_intrusive<c10d::Work>();
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()), HasSubstr("ranks 1, 3 lost"));
}

TEST(CollectiveTest, OtherFailureWithEveryRankAliveIsInternal) {
  Heartbeats heartbeats(1, {0});
  absl::Status status = RunCollective(
      "gather", heartbeats.Context(), []() -> c10::intrusive_ptr<c10d::Work> {
        throw std::runtime_error("tensor size mismatch");
      });
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("gather on the control group failed: tensor size "
                        "mismatch"));
}

// Rank 0 of a real two-rank Gloo group whose rank 1 joined the group and
// then never enters a collective.
class GlooPairTest : public ::testing::Test {
 protected:
  static constexpr std::chrono::milliseconds kCollectiveTimeout{20000};

  // `beating`: the ranks whose watchdogs run.
  explicit GlooPairTest(const std::vector<int>& beating)
      : heartbeats_(2, beating) {}

  void SetUp() override {
    IgnoreSigpipe();
    std::thread second([&] { peer_ = MakeGroup(1); });
    group_ = MakeGroup(0);
    second.join();
  }

  ProcessGroupPtr MakeGroup(int rank) {
    auto options = c10d::ProcessGroupGloo::Options::create(kCollectiveTimeout);
    options->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    return c10::make_intrusive<c10d::ProcessGroupGloo>(
        c10::make_intrusive<c10d::PrefixStore>("world", heartbeats_.store()),
        rank, 2, options);
  }

  // Runs `start` on rank 0 within `timeout`, on a group whose ranks
  // `leave_on_failure`, and checks that the wait ended with `code` saying
  // `why`, and well before the collective timeout unless `timeout` is
  // shorter.
  void ExpectWaitEnded(
      const std::function<c10::intrusive_ptr<c10d::Work>()>& start,
      absl::StatusCode code, const std::string& why,
      std::chrono::milliseconds timeout = kCollectiveTimeout,
      std::vector<int> leave_on_failure = {}) {
    const auto begin = std::chrono::steady_clock::now();
    absl::Status status = RunCollective(
        "broadcast", heartbeats_.Context(timeout, std::move(leave_on_failure)),
        start);
    EXPECT_LT(std::chrono::steady_clock::now() - begin,
              std::chrono::seconds(5));
    EXPECT_EQ(status.code(), code) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(why));
  }

  Heartbeats heartbeats_;
  ProcessGroupPtr group_;
  ProcessGroupPtr peer_;
  std::vector<at::Tensor> tensors_ = {at::zeros({4})};
};

// Rank 1's heartbeat never moves either, as under SIGSTOP.
class HungPeerTest : public GlooPairTest {
 protected:
  HungPeerTest() : GlooPairTest({0}) {}
  static constexpr char kHung[] =
      "rank 1 stopped answering during broadcast on the control group: no "
      "heartbeat for 300 ms";
};

TEST_F(HungPeerTest, CollectiveEndsOnTheHungRankBeforeItsTimeout) {
  ExpectWaitEnded([&] { return group_->broadcast(tensors_); },
                  absl::StatusCode::kUnavailable, kHung);
}

TEST_F(HungPeerTest, ReceiveEndsOnTheHungRankBeforeItsTimeout) {
  ExpectWaitEnded([&] { return group_->recv(tensors_, 1, 0); },
                  absl::StatusCode::kUnavailable, kHung);
}

// Rank 1 lives, but rank 0 opens a newer generation of the group while
// rank 0 of this one waits: the wait must end, so that the rank can join it.
class SupersededGenerationTest : public GlooPairTest {
 protected:
  SupersededGenerationTest() : GlooPairTest({0, 1}) {}
  void SetUp() override {
    GlooPairTest::SetUp();
    opener_ = std::thread([this] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      OpenNextGeneration(*heartbeats_.store());
    });
  }
  void TearDown() override { opener_.join(); }
  static constexpr char kLeft[] =
      "broadcast on the control group was left: rank 0 re-forms the group "
      "as generation 1";
  std::thread opener_;
};

TEST_F(SupersededGenerationTest, CollectiveEndsBeforeItsTimeout) {
  ExpectWaitEnded([&] { return group_->broadcast(tensors_); },
                  absl::StatusCode::kUnavailable, kLeft);
}

TEST_F(SupersededGenerationTest, ReceiveEndsBeforeItsTimeout) {
  ExpectWaitEnded([&] { return group_->recv(tensors_, 1, 0); },
                  absl::StatusCode::kUnavailable, kLeft);
}

// Rank 1 left the generation after an error of its own, which leaves its
// groups' sockets open: the wait ends on its exit mark, not at the
// collective timeout.
class ExitedPeerTest : public GlooPairTest {
 protected:
  ExitedPeerTest() : GlooPairTest({0, 1}) {}
  void SetUp() override {
    GlooPairTest::SetUp();
    leaver_ = std::thread([this] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      heartbeats_.Leave(1);
    });
  }
  void TearDown() override { leaver_.join(); }
  static constexpr char kExited[] =
      "rank 1 left generation 0 of the group during broadcast on the "
      "control group";
  std::thread leaver_;
};

TEST_F(ExitedPeerTest, CollectiveEndsOnTheExitMark) {
  ExpectWaitEnded([&] { return group_->broadcast(tensors_); },
                  absl::StatusCode::kUnavailable, kExited);
}

TEST_F(ExitedPeerTest, ReceiveEndsOnTheExitMark) {
  ExpectWaitEnded([&] { return group_->recv(tensors_, 1, 0); },
                  absl::StatusCode::kUnavailable, kExited);
}

// Rank 1 lives but failed its share of the run rank 0 waits in, and posts
// so instead of joining: the wait ends on the post.
class FailedPeerTest : public GlooPairTest {
 protected:
  static constexpr int64_t kRun = 7;
  FailedPeerTest() : GlooPairTest({0, 1}) {}
  void SetUp() override {
    GlooPairTest::SetUp();
    poster_ = std::thread([this] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      RunFailureBoard board(ScopeToGeneration(heartbeats_.store(), 0),
                            /*world_size=*/2);
      EXPECT_TRUE(
          board.Post(kRun, 1, absl::ResourceExhaustedError("out of memory"))
              .ok());
    });
  }
  void TearDown() override { poster_.join(); }
  static constexpr char kFailed[] =
      "broadcast on the control group was left: a rank of the group failed "
      "its share of the run and will not join (rank 1: RESOURCE_EXHAUSTED: "
      "out of memory)";
  std::thread poster_;
};

TEST_F(FailedPeerTest, CollectiveEndsOnThePost) {
  heartbeats_.first().FollowRun(kRun);
  ExpectWaitEnded([&] { return group_->broadcast(tensors_); },
                  absl::StatusCode::kAborted, kFailed, kCollectiveTimeout,
                  {0, 1});
}

TEST_F(FailedPeerTest, ReceiveEndsOnThePost) {
  heartbeats_.first().FollowRun(kRun);
  ExpectWaitEnded([&] { return group_->recv(tensors_, 1, 0); },
                  absl::StatusCode::kAborted, kFailed, kCollectiveTimeout,
                  {0, 1});
}

// Neither a post of a run other than the one rank 0 takes part in, nor one
// on a group whose ranks go on joining after a failure, is a reason to
// leave: the wait lasts until its timeout.
TEST_F(FailedPeerTest, APostOfAnotherRunDoesNotEndTheWait) {
  heartbeats_.first().FollowRun(kRun + 1);
  ExpectWaitEnded([&] { return group_->broadcast(tensors_); },
                  absl::StatusCode::kDeadlineExceeded,
                  "did not complete within 1500 ms",
                  std::chrono::milliseconds(1500), {0, 1});
}

TEST_F(FailedPeerTest, APostDoesNotEndAWaitOnAGroupItsRanksKeepJoining) {
  heartbeats_.first().FollowRun(kRun);
  ExpectWaitEnded([&] { return group_->broadcast(tensors_); },
                  absl::StatusCode::kDeadlineExceeded,
                  "did not complete within 1500 ms",
                  std::chrono::milliseconds(1500));
}

}  // namespace
}  // namespace ditserve::dist
