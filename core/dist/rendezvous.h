#ifndef DITSERVE_CORE_DIST_RENDEZVOUS_H_
#define DITSERVE_CORE_DIST_RENDEZVOUS_H_

#include <chrono>
#include <memory>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dist/process_group.h"
#include "core/dist/rank_env.h"
#include "core/dist/watchdog.h"
#include "ditserve/v1/startup.pb.h"

namespace ditserve::dist {

struct RendezvousOptions {
  // Longest wait for the store of rank 0 and for every rank to join a group.
  std::chrono::milliseconds connect_timeout{60000};
  // Gloo's timeout for each collective on the groups formed here. Idle ranks
  // wait in a control broadcast, so this must exceed the host's ping
  // interval.
  std::chrono::milliseconds collective_timeout{30000};
  WatchdogOptions watchdog;
};

// The groups every rank joins at start-up: rank 0 serves a c10d TCPStore at
// MASTER_ADDR:MASTER_PORT; every rank joins a Gloo world group, a separate
// Gloo control group (CPU, also when the data plane is NCCL) and, in CUDA
// builds, a NCCL data-plane group. A watchdog keeps this rank's heartbeat in
// the store.
class Rendezvous {
 public:
  // Before forming any group, every rank publishes `facts` in the store and
  // all must agree with rank 0's (AgreeOnStartup).
  // Errors: UNAVAILABLE naming the address when the store cannot be reached
  // or a group cannot be formed within connect_timeout; FAILED_PRECONDITION
  // naming the rank, field and values where the facts disagree.
  static absl::StatusOr<std::unique_ptr<Rendezvous>> Connect(
      const RankEnv& env, const RendezvousOptions& options,
      const v1::StartupFacts& facts);

  const RankEnv& env() const { return env_; }
  const RendezvousOptions& options() const { return options_; }
  const c10::intrusive_ptr<c10d::Store>& store() const { return store_; }
  // Gloo over every rank.
  const ProcessGroupPtr& world() const { return world_; }
  // Gloo over every rank, used only by the control channel.
  const ProcessGroupPtr& control() const { return control_; }
  // NCCL over every rank in CUDA builds, else the Gloo world group.
  const ProcessGroupPtr& data() const { return data_; }
  Watchdog& watchdog() { return *watchdog_; }

  // Rank 0, after the group broke: keeps serving the store for one
  // collective timeout plus the watchdog's window, so every survivor can
  // finish its failed collective and still name the lost rank. Returns at
  // once on other ranks.
  void KeepStoreForSurvivors();

  // A new Gloo group of `size` ranks whose members all call this with the
  // same `prefix` (keys in the store are namespaced by it).
  absl::StatusOr<ProcessGroupPtr> NewGlooGroup(absl::string_view prefix,
                                               int rank_in_group, int size);

 private:
  Rendezvous(const RankEnv& env, const RendezvousOptions& options)
      : env_(env), options_(options) {}

  RankEnv env_;
  RendezvousOptions options_;
  c10::intrusive_ptr<c10d::Store> store_;
  ProcessGroupPtr world_;
  ProcessGroupPtr control_;
  ProcessGroupPtr data_;
  std::unique_ptr<Watchdog> watchdog_;
};

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_RENDEZVOUS_H_
