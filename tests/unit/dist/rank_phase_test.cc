#include "core/dist/rank_phase.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/local_cluster/rank_launcher.h"

namespace ditserve::dist {
namespace {

using ::testing::HasSubstr;

// Two ranks of one process, each with its own store connection, groups and
// watchdog, as two processes have.
class RankPhaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<int> port = local_cluster::PickFreePort();
    ASSERT_TRUE(port.ok()) << port.status();
    RendezvousOptions options;
    options.watchdog = {.interval = std::chrono::milliseconds(50),
                        .lapsed_intervals = 3,
                        .hung_after = std::chrono::milliseconds(500)};
    const auto connect = [&](int rank) {
      return Rendezvous::Connect({.rank = rank,
                                  .world_size = 2,
                                  .local_rank = rank,
                                  .master_addr = "127.0.0.1",
                                  .master_port = *port},
                                 options, {});
    };
    absl::StatusOr<std::unique_ptr<Rendezvous>> second;
    std::thread joining([&] { second = connect(1); });
    absl::StatusOr<std::unique_ptr<Rendezvous>> first = connect(0);
    joining.join();
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_TRUE(second.ok()) << second.status();
    ranks_[0] = *std::move(first);
    ranks_[1] = *std::move(second);
  }
  void TearDown() override {
    ranks_[1].reset();
    ranks_[0].reset();
  }

  // Rank 0 finishes `phase_` at once; rank 1 after `delay` with `outcome`
  // (or not at all when `delay` is negative). Returns rank 0's result and
  // how long it waited.
  std::pair<absl::Status, std::chrono::milliseconds> RankZeroWaits(
      std::chrono::milliseconds delay, absl::Status outcome) {
    absl::Status second;
    std::thread other;
    if (delay.count() >= 0) {
      other = std::thread([&] {
        std::this_thread::sleep_for(delay);
        second = FinishRankPhase(*ranks_[1], phase_, outcome);
      });
    }
    const auto begin = std::chrono::steady_clock::now();
    absl::Status first = FinishRankPhase(*ranks_[0], phase_, absl::OkStatus());
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - begin);
    if (other.joinable()) other.join();
    EXPECT_EQ(second, outcome) << "a rank gets its own outcome back";
    return {first, waited};
  }

  RankPhase phase_{.key = "model_loaded",
                   .description = "loading the model",
                   .timeout = std::chrono::seconds(20),
                   .timeout_flag = "--load_timeout_s"};
  std::unique_ptr<Rendezvous> ranks_[2];
};

TEST_F(RankPhaseTest, ARankThatFinishedFirstWaitsForTheSlowOne) {
  const auto [status, waited] =
      RankZeroWaits(std::chrono::milliseconds(1500), absl::OkStatus());
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_GE(waited, std::chrono::milliseconds(1400));
}

TEST_F(RankPhaseTest, AnotherRanksFailureEndsTheWaitNamingIt) {
  const auto [status, waited] = RankZeroWaits(
      std::chrono::milliseconds(200), absl::NotFoundError("no weights"));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_EQ(status.message(),
            "rank 1 failed loading the model: NOT_FOUND: no weights");
  EXPECT_LT(waited, std::chrono::seconds(5));
}

TEST_F(RankPhaseTest, ARankThatNeverFinishesFailsTheWaitAtTheTimeout) {
  phase_.timeout = std::chrono::milliseconds(1200);
  const auto [status, waited] =
      RankZeroWaits(std::chrono::milliseconds(-1), absl::OkStatus());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_EQ(status.message(),
            "rank 1 did not finish loading the model within 1.2 s "
            "(--load_timeout_s)");
  EXPECT_GE(waited, std::chrono::milliseconds(1200));
}

// The host stops waiting when it is asked to stop.
TEST_F(RankPhaseTest, KeepWaitingEndsTheWait) {
  const auto stop_at =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  phase_.keep_waiting = [stop_at]() -> absl::Status {
    if (std::chrono::steady_clock::now() < stop_at) return absl::OkStatus();
    return absl::CancelledError("the host is stopping");
  };
  const auto [status, waited] =
      RankZeroWaits(std::chrono::milliseconds(-1), absl::OkStatus());
  EXPECT_EQ(status, absl::CancelledError("the host is stopping"));
  EXPECT_LT(waited, std::chrono::seconds(5));
}

// A rank that leaves the generation (its process ended, or it goes on to
// the next generation) is not waited for until the timeout.
TEST_F(RankPhaseTest, ARankThatLeftEndsTheWait) {
  std::thread leaving([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ranks_[1].reset();
  });
  const auto begin = std::chrono::steady_clock::now();
  const absl::Status status =
      FinishRankPhase(*ranks_[0], phase_, absl::OkStatus());
  leaving.join();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(5));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_EQ(status.message(),
            "rank 1 left generation 0 while loading the model");
}

}  // namespace
}  // namespace ditserve::dist
