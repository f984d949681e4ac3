#include "core/base/steady_wait.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <ctime>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/base/monotonic_clock.h"
#include "gtest/gtest.h"

namespace ditserve::base {
namespace {

// Far beyond any wait here: a wait that ends before it ended for its reason.
constexpr absl::Duration kLong = absl::Seconds(60);
constexpr absl::Duration kShort = absl::Milliseconds(50);

TEST(SteadyNotificationTest, AWaitEndsWhenNotified) {
  SteadyNotification notification;
  std::thread notifier([&] {
    absl::SleepFor(kShort);
    notification.Notify();
  });
  const absl::Time start = MonotonicNow();
  EXPECT_TRUE(notification.WaitForNotificationWithTimeout(kLong));
  EXPECT_LT(MonotonicNow() - start, kLong);
  EXPECT_TRUE(notification.HasBeenNotified());
  notifier.join();
}

TEST(SteadyNotificationTest, AnUnnotifiedWaitEndsAtItsTimeout) {
  SteadyNotification notification;
  const absl::Time start = MonotonicNow();
  EXPECT_FALSE(notification.WaitForNotificationWithTimeout(kShort));
  const absl::Duration waited = MonotonicNow() - start;
  EXPECT_GE(waited, kShort);
  EXPECT_LT(waited, kLong);
  EXPECT_FALSE(notification.HasBeenNotified());
}

TEST(SteadyNotificationTest, ANotifiedOneReturnsAtOnceWhateverTheTimeout) {
  SteadyNotification notification;
  notification.Notify();
  EXPECT_TRUE(
      notification.WaitForNotificationWithTimeout(absl::ZeroDuration()));
  EXPECT_TRUE(
      notification.WaitForNotificationWithTimeout(absl::InfiniteDuration()));
  EXPECT_TRUE(notification.WaitForNotificationWithTimeout(-kShort));
}

TEST(SteadyNotificationTest, AnInfiniteTimeoutWaitsForTheNotification) {
  SteadyNotification notification;
  std::thread notifier([&] {
    absl::SleepFor(kShort);
    notification.Notify();
  });
  EXPECT_TRUE(
      notification.WaitForNotificationWithTimeout(absl::InfiniteDuration()));
  notifier.join();
}

struct GuardedCount {
  absl::Mutex mu;
  int count ABSL_GUARDED_BY(mu) = 0;
  SteadyCondVar changed;

  void Add() {
    absl::MutexLock lock(&mu);
    ++count;
    changed.SignalAll();
  }
  // Waits for `count` to reach `target`.
  bool AwaitCount(int target, absl::Duration timeout) {
    absl::MutexLock lock(&mu);
    return changed.AwaitWithTimeout(
        mu, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return count >= target; },
        timeout);
  }
};

TEST(SteadyCondVarTest, AWaitEndsOnceASignalledChangeMakesTheConditionHold) {
  GuardedCount guarded;
  std::thread adder([&] {
    for (int i = 0; i < 3; ++i) {
      absl::SleepFor(absl::Milliseconds(10));
      guarded.Add();
    }
  });
  const absl::Time start = MonotonicNow();
  EXPECT_TRUE(guarded.AwaitCount(3, kLong));
  EXPECT_LT(MonotonicNow() - start, kLong);
  adder.join();
}

TEST(SteadyCondVarTest, AConditionThatNeverHoldsEndsAtTheTimeout) {
  GuardedCount guarded;
  guarded.Add();
  const absl::Time start = MonotonicNow();
  EXPECT_FALSE(guarded.AwaitCount(2, kShort));
  const absl::Duration waited = MonotonicNow() - start;
  EXPECT_GE(waited, kShort);
  EXPECT_LT(waited, kLong);
}

TEST(SteadyCondVarTest, AConditionThatHoldsReturnsAtOnce) {
  GuardedCount guarded;
  guarded.Add();
  EXPECT_TRUE(guarded.AwaitCount(1, absl::ZeroDuration()));
}

// The wall clock as the kernel keeps it: libfaketime cannot move a raw
// system call's reading.
absl::Time KernelWallClock() {
  timespec now{};
  syscall(SYS_clock_gettime, CLOCK_REALTIME, &now);
  return absl::TimeFromTimespec(now);
}

// The cases above, and the waits of the watchdog, collectives, scheduler,
// admission queue and credential reloader, also run under libfaketime with
// the process's wall clock an hour ahead of the kernel's (tests/unit/
// CMakeLists.txt, "stepped_wall_clock"): what a step back of an hour does to a
// wait that began just before it. These cases show that the setting holds
// and that a wait for a wall-clock deadline, which is what Debian 12's Abseil
// makes of every timeout, lasts the hour, so those runs test something.
class SteppedWallClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("FAKETIME") == nullptr) {
      GTEST_SKIP() << "runs under libfaketime (FAKETIME), as ctest runs it";
    }
  }
};

TEST_F(SteppedWallClockTest, TheProcesssWallClockIsAnHourAheadOfTheKernels) {
  const absl::Duration ahead = absl::Now() - KernelWallClock();
  EXPECT_GT(ahead, absl::Minutes(59));
  EXPECT_LT(ahead, absl::Minutes(61));
}

TEST_F(SteppedWallClockTest, AWallClockDeadlineIsAnHourAway) {
  absl::Notification notification;
  std::atomic<bool> returned = false;
  std::thread waiter([&] {
    notification.WaitForNotificationWithDeadline(absl::Now() + kShort);
    returned = true;
  });
  absl::SleepFor(absl::Seconds(2));
  EXPECT_FALSE(returned.load());
  notification.Notify();
  waiter.join();
}

}  // namespace
}  // namespace ditserve::base
