#include "core/dist/watchdog.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ditserve::dist {
namespace {

// A store across a slow link: every heartbeat read answers after `latency`.
class SlowLinkStore : public c10d::HashStore {
 public:
  explicit SlowLinkStore(absl::Duration latency) : latency_(latency) {}
  int64_t add(const std::string& key, int64_t value) override {
    absl::SleepFor(latency_);
    return HashStore::add(key, value);
  }
  bool check(const std::vector<std::string>& keys) override {
    absl::SleepFor(latency_);
    return HashStore::check(keys);
  }

 private:
  const absl::Duration latency_;
};

// Rank 1 of 8: its first heartbeat is 10 store calls (its bump, 8
// counters, the generation), 2 s at 200 ms each, longer than the 1.5 s
// window after which a rank takes the store for silent and stops posting to
// it. Each call answers, so it is not.
TEST(WatchdogTest, ASlowLinkIsNotASilentStore) {
  Watchdog watchdog(c10::make_intrusive<SlowLinkStore>(absl::Milliseconds(200)),
                    /*rank=*/1, /*world_size=*/8, WatchdogOptions{},
                    /*generation=*/0);
  absl::Duration longest = absl::ZeroDuration();
  const absl::Time until = absl::Now() + absl::Seconds(2.5);
  while (absl::Now() < until) {
    longest = std::max(longest, watchdog.StoreSilence());
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_GT(longest, absl::Milliseconds(100)) << "a call was seen in flight";
  EXPECT_LT(longest, absl::FromChrono(watchdog.window()));
}

}  // namespace
}  // namespace ditserve::dist
