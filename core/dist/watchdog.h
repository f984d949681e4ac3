#ifndef DITSERVE_CORE_DIST_WATCHDOG_H_
#define DITSERVE_CORE_DIST_WATCHDOG_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/base/steady_wait.h"
#include "core/dist/run_failure_board.h"

namespace ditserve::dist {

struct WatchdogOptions {
  // How often each rank bumps its heartbeat counter in the store and reads
  // everyone else's.
  std::chrono::milliseconds interval{500};
  // A rank whose counter does not move for this many intervals is lost.
  int lapsed_intervals = 3;
  // A rank whose counter has not moved for this long is hung: waits on
  // collectives give up on it (HungRanks) well before the collective
  // timeout, which long steps need to be generous.
  std::chrono::milliseconds hung_after{6000};
};

// Keeps a per-rank heartbeat counter in the c10d store so that, after a
// collective fails, the survivors can name the rank that died (Gloo only
// reports a closed connection or a timeout), and so that a wait can give up
// on a rank that stopped (SIGSTOP, a hung kernel) without a collective
// timeout. A rank that ends normally, even after an error, marks itself as
// exited first, so only a rank that died is named. Rank 0 hosts the store,
// so an unreachable or silent store names rank 0. It also watches the group
// generation (GroupStore): once rank 0 opened a newer one, waits on this
// generation's groups end (SupersededBy). And it reads the run failure posts
// of the run in progress (FollowRun), so that a wait on a rank that failed
// its share and will not join ends at once (FailedAmong).
class Watchdog {
 public:
  // Starts the heartbeat and monitor threads on `store`, which must be a
  // connection of its own (a TCPStore client), not one shared with
  // collectives, and not scoped: the heartbeats go into `generation`'s
  // namespace.
  Watchdog(c10::intrusive_ptr<c10d::Store> store, int rank, int world_size,
           WatchdogOptions options, int64_t generation);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Ranks other than this one whose heartbeat did not advance over
  // lapsed_intervals intervals and that did not mark themselves exited;
  // blocks for that long. Rank 0 alone, at once, once the store has been
  // silent for hung_after (StoreSilence).
  std::vector<int> FindLostRanks();

  // Ranks other than this one whose heartbeat has not advanced for
  // hung_after and that did not mark themselves exited; rank 0 alone when
  // the store itself has not answered for that long. Does not block.
  std::vector<int> HungRanks();

  // Ranks other than this one that marked themselves exited from this
  // generation, as the heartbeat thread last read them: a rank that left
  // (after an error, its own or the group's, and may join the next
  // generation) joins none of this one's collectives, although its sockets
  // may stay open. Does not block.
  std::vector<int> ExitedRanks();

  // How long the watchdog's store call in flight has waited (zero when
  // none), or InfiniteDuration() while its last store call failed. Once it
  // grows, the store (which rank 0 hosts) may have stopped, and another
  // store call would block until the store client's timeout. Does not
  // block.
  absl::Duration StoreSilence();

  // The generation rank 0 opened after this one, once the heartbeat thread
  // saw it; nullopt while this one is current. Does not block.
  std::optional<int64_t> SupersededBy();

  // From now on the heartbeat thread reads the RunFailureBoard's posts for
  // `run`, the run this rank takes part in, instead of the previous run's.
  void FollowRun(int64_t run);

  // "rank 3: INTERNAL: ..." for the ranks of `ranks` other than this one
  // that posted a failure of the run followed, as the heartbeat thread last
  // read them; nullopt when none did. Does not block.
  std::optional<std::string> FailedAmong(const std::vector<int>& ranks);

  // Calls `abort` once, from the monitor thread, when HungRanks() or
  // ExitedRanks() turns non-empty, the generation is superseded or
  // FailedAmong(`failing`) has a value, unless RemoveAbortOnGiveUp(id) ran
  // first (after which it is never called). For waits that cannot be sliced
  // (point-to-point).
  int64_t AbortOnGiveUp(std::function<void()> abort, std::vector<int> failing);
  void RemoveAbortOnGiveUp(int64_t id);

  // How long FindLostRanks observes the heartbeats.
  std::chrono::milliseconds window() const {
    return options_.interval * options_.lapsed_intervals;
  }
  const WatchdogOptions& options() const { return options_; }
  int64_t generation() const { return generation_; }

 private:
  // Heartbeat thread body: bumps this rank's counter and reads the others.
  void Beat();
  // Monitor thread body: runs the aborts once a rank hangs, the generation
  // is superseded, or a rank they name posted a failure.
  void Monitor();
  // Waits one interval; true once the destructor asked the threads to stop.
  bool WaitForStop();
  // Runs `call`, which uses the store, alone among the watchdog's store
  // calls and timed for StoreSilence; UNAVAILABLE when it throws.
  absl::Status CallStore(absl::FunctionRef<absl::Status()> call);
  // Heartbeat counters of every rank; nullopt when the store is unreachable.
  std::optional<std::vector<int64_t>> ReadCounters();
  // Whether `rank` marked itself exited; nullopt when the store is
  // unreachable.
  std::optional<bool> HasExited(int rank);
  // The heartbeat thread's reads, stopping at the first that fails: each
  // would wait the store client's timeout in turn, holding up its stop.
  void ObserveStore();
  // Records a read of every counter at `now`; false when the store stopped
  // answering.
  bool Observe(const std::vector<int64_t>& counters, absl::Time now);
  // Records whether rank 0 opened a newer generation; false when the store
  // did not answer.
  bool ObserveGeneration();
  // Records the posts of the run followed.
  void ObserveRunFailures();

  // A wait's abort and the ranks whose failure ends it (AbortOnGiveUp).
  struct PendingAbort {
    std::function<void()> abort;
    std::vector<int> failing;
  };

  const c10::intrusive_ptr<c10d::Store> store_;
  // store_ in this generation's namespace.
  const c10::intrusive_ptr<c10d::Store> scoped_;
  const int64_t generation_;
  const int rank_;
  const int world_size_;
  const WatchdogOptions options_;
  // Over scoped_, so only under store_mutex_.
  RunFailureBoard run_failures_;
  // Serialises store operations of the heartbeat thread and of callers.
  absl::Mutex store_mutex_;
  base::SteadyNotification stop_;

  // What the heartbeat thread last saw; never held across a store call, so
  // HungRanks answers while the store is silent.
  absl::Mutex seen_mutex_;
  std::vector<int64_t> counters_ ABSL_GUARDED_BY(seen_mutex_);
  std::vector<absl::Time> advanced_at_ ABSL_GUARDED_BY(seen_mutex_);
  std::vector<bool> exited_ ABSL_GUARDED_BY(seen_mutex_);
  absl::Time store_answered_at_ ABSL_GUARDED_BY(seen_mutex_);
  // Set while a store call (CallStore) is in flight.
  std::optional<absl::Time> store_call_since_ ABSL_GUARDED_BY(seen_mutex_);
  // Whether the last store call failed.
  bool store_call_failed_ ABSL_GUARDED_BY(seen_mutex_) = false;
  std::optional<int64_t> superseded_by_ ABSL_GUARDED_BY(seen_mutex_);
  std::optional<int64_t> followed_run_ ABSL_GUARDED_BY(seen_mutex_);
  std::map<int, std::string> run_posts_ ABSL_GUARDED_BY(seen_mutex_);

  absl::Mutex aborts_mutex_;
  std::map<int64_t, PendingAbort> aborts_ ABSL_GUARDED_BY(aborts_mutex_);
  int64_t next_abort_id_ ABSL_GUARDED_BY(aborts_mutex_) = 0;

  std::thread beat_thread_;
  std::thread monitor_thread_;
};

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_WATCHDOG_H_
