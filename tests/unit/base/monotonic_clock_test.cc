#include "core/base/monotonic_clock.h"

#include <chrono>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ditserve::base {
namespace {

// Read between two readings of the steady clock, the value lies between
// them: it is the steady clock, whatever the wall clock says (on Linux the two
// differ by decades, so a wall-clock reading would fall far outside).
TEST(MonotonicClockTest, ReadsTheSteadyClock) {
  const auto before = std::chrono::steady_clock::now().time_since_epoch();
  const absl::Duration now = MonotonicNow() - absl::UnixEpoch();
  const auto after = std::chrono::steady_clock::now().time_since_epoch();
  EXPECT_LE(absl::FromChrono(before), now);
  EXPECT_LE(now, absl::FromChrono(after));
  EXPECT_GT(absl::AbsDuration(absl::Now() - MonotonicNow()), absl::Hours(1));
}

TEST(MonotonicClockTest, MeasuresASleep) {
  const absl::Time start = MonotonicNow();
  absl::SleepFor(absl::Milliseconds(20));
  const absl::Duration slept = MonotonicNow() - start;
  EXPECT_GE(slept, absl::Milliseconds(20));
  EXPECT_LT(slept, absl::Seconds(10));
}

}  // namespace
}  // namespace ditserve::base
