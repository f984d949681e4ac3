#include "core/base/steady_wait.h"

#include <algorithm>
#include <chrono>

#include "absl/base/thread_annotations.h"

namespace ditserve::base {
namespace {

// A timeout of absl::InfiniteDuration() (or any beyond the steady clock's
// range) waits this long, which no process outlives.
constexpr absl::Duration kLongestWait = absl::Hours(24 * 365 * 100);

std::chrono::steady_clock::time_point SteadyDeadline(absl::Duration timeout) {
  return std::chrono::steady_clock::now() +
         absl::ToChronoNanoseconds(
             std::clamp(timeout, absl::ZeroDuration(), kLongestWait));
}

// std::condition_variable_any's lock interface over an absl::Mutex, which
// spells it Lock and Unlock.
class AbslMutexLockable {
 public:
  explicit AbslMutexLockable(absl::Mutex& mu) : mu_(mu) {}
  void lock() ABSL_NO_THREAD_SAFETY_ANALYSIS { mu_.Lock(); }
  void unlock() ABSL_NO_THREAD_SAFETY_ANALYSIS { mu_.Unlock(); }

 private:
  absl::Mutex& mu_;
};

}  // namespace

void SteadyNotification::Notify() {
  // Signalled under the lock, so that a waiter that sees the notification
  // (and may then destroy this) does so only once Notify is done with it.
  std::lock_guard<std::mutex> lock(mu_);
  notified_.store(true, std::memory_order_release);
  changed_.notify_all();
}

bool SteadyNotification::WaitForNotificationWithTimeout(
    absl::Duration timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_until(lock, SteadyDeadline(timeout),
                             [this] { return HasBeenNotified(); });
}

bool SteadyCondVar::AwaitWithTimeout(absl::Mutex& mu,
                                     absl::FunctionRef<bool()> condition,
                                     absl::Duration timeout) {
  AbslMutexLockable lockable(mu);
  return changed_.wait_until(lockable, SteadyDeadline(timeout),
                             [&] { return condition(); });
}

}  // namespace ditserve::base
