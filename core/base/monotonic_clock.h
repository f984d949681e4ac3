#ifndef DITSERVE_CORE_BASE_MONOTONIC_CLOCK_H_
#define DITSERVE_CORE_BASE_MONOTONIC_CLOCK_H_

#include <chrono>

#include "absl/time/time.h"

namespace ditserve::base {

// The time every timeout and silence is measured on. The wall clock
// (absl::Now) can be stepped by NTP or a VM catching up: a step forward would
// end waits early and make every peer look hung to the watchdog, a step back
// would stretch a wait by the step. The steady clock only moves forward.
//
// The result is an absl::Time so that deadlines keep absl's arithmetic, but
// its epoch is the steady clock's (boot, on Linux): compare it only with other
// MonotonicNow() values, never with absl::Now() or a client's deadline.
inline absl::Time MonotonicNow() {
  return absl::UnixEpoch() +
         absl::FromChrono(std::chrono::steady_clock::now().time_since_epoch());
}

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_MONOTONIC_CLOCK_H_
