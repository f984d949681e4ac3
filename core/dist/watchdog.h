#ifndef DITSERVE_CORE_DIST_WATCHDOG_H_
#define DITSERVE_CORE_DIST_WATCHDOG_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ditserve::dist {

struct WatchdogOptions {
  // How often each rank bumps its heartbeat counter in the store.
  std::chrono::milliseconds interval{500};
  // A rank whose counter does not move for this many intervals is lost.
  int lapsed_intervals = 3;
};

// Keeps a per-rank heartbeat counter in the c10d store so that, after a
// collective fails, the survivors can name the rank that died (Gloo only
// reports a closed connection or a timeout). A rank that ends normally,
// even after an error, marks itself as exited first, so only a rank that
// died is named. Rank 0 hosts the store, so an unreachable store names
// rank 0.
class Watchdog {
 public:
  // Starts the heartbeat thread on `store`, which must be a connection of
  // its own (a TCPStore client), not one shared with collectives.
  Watchdog(c10::intrusive_ptr<c10d::Store> store, int rank, int world_size,
           WatchdogOptions options);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Ranks other than this one whose heartbeat did not advance over
  // lapsed_intervals intervals and that did not mark themselves exited;
  // blocks for that long.
  std::vector<int> FindLostRanks();

  // How long FindLostRanks observes the heartbeats.
  std::chrono::milliseconds window() const {
    return options_.interval * options_.lapsed_intervals;
  }

 private:
  // Heartbeat thread body.
  void Beat();
  // Waits one interval; true once the destructor asked the thread to stop.
  bool WaitForStop();
  // Heartbeat counters of every rank; nullopt when the store is unreachable.
  std::optional<std::vector<int64_t>> ReadCounters();
  // Whether `rank` marked itself exited; false when the store is unreachable.
  bool HasExited(int rank);

  const c10::intrusive_ptr<c10d::Store> store_;
  const int rank_;
  const int world_size_;
  const WatchdogOptions options_;
  // Serialises store operations of the heartbeat thread and of callers.
  absl::Mutex store_mutex_;
  absl::Mutex stop_mutex_;
  bool stop_ ABSL_GUARDED_BY(stop_mutex_) = false;
  std::thread thread_;
};

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_WATCHDOG_H_
