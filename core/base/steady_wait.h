#ifndef DITSERVE_CORE_BASE_STEADY_WAIT_H_
#define DITSERVE_CORE_BASE_STEADY_WAIT_H_

// Timed waits measured on the steady clock. Debian 12's Abseil (20220623)
// turns the timeout of absl::Notification::WaitForNotificationWithTimeout,
// absl::Mutex::AwaitWithTimeout and absl::CondVar::WaitWithTimeout into a
// wall-clock deadline that the kernel waits for (FUTEX_CLOCK_REALTIME): a
// wall clock stepped back by NTP or a resumed VM stretches such a wait by the
// step (a worker's heartbeat would stop, and rank 0 would count it lost), one
// stepped forward ends it at once. libstdc++ waits on a
// std::condition_variable against CLOCK_MONOTONIC.

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ditserve::base {

// absl::Notification's interface, with a steady-clock timeout.
class SteadyNotification {
 public:
  void Notify();
  bool HasBeenNotified() const {
    return notified_.load(std::memory_order_acquire);
  }
  // True once notified; false if `timeout` passed first.
  bool WaitForNotificationWithTimeout(absl::Duration timeout) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::atomic<bool> notified_ = false;
};

// Waits for a condition on state an absl::Mutex guards, with a steady-clock
// timeout. Unlike absl::Condition, nothing re-checks the condition on its own:
// whatever changes the state so that a waiter's condition may now hold calls
// SignalAll before it releases the mutex (so that no waiter returns, and
// perhaps destroys this, before SignalAll is done with it).
class SteadyCondVar {
 public:
  // `mu` is held on entry and on return. Returns `condition()` as of the end
  // of the wait.
  bool AwaitWithTimeout(absl::Mutex& mu, absl::FunctionRef<bool()> condition,
                        absl::Duration timeout);
  void SignalAll() { changed_.notify_all(); }

 private:
  std::condition_variable_any changed_;
};

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_STEADY_WAIT_H_
