#ifndef DITSERVE_CORE_DIST_RENDEZVOUS_H_
#define DITSERVE_CORE_DIST_RENDEZVOUS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dist/group_store.h"
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
  // The longest a rank that loaded its share of the model waits for the
  // slowest rank to load its own (FinishRankPhase).
  std::chrono::milliseconds load_timeout{1800000};
  WatchdogOptions watchdog;
  // Whether NewDataGroup's groups are NCCL's: only for --device cuda in CUDA
  // builds, as ProcessGroupNCCL refuses a machine without GPUs. Otherwise
  // they are Gloo's.
  bool nccl_data_group = false;
};

// One generation of the group (see GroupStore): every rank joins a Gloo
// world group and a separate Gloo control group (CPU, also when the data
// plane is NCCL), both under the generation's keys in rank 0's store, where
// the data-plane groups (NewDataGroup) are formed later. A watchdog keeps
// this rank's heartbeat in the store.
class Rendezvous {
 public:
  // Joins `generation` in `store`. Before forming any group, every rank
  // publishes `facts` and all must agree with rank 0's (AgreeOnStartup);
  // the wait for the other ranks stops early when `keep_waiting` (may be
  // empty) turns non-OK or, on ranks > 0, when rank 0 opens a newer
  // generation. Errors: UNAVAILABLE when a rank does not arrive within
  // connect_timeout or a group cannot be formed; FAILED_PRECONDITION naming
  // the rank, field and values where the facts disagree.
  static absl::StatusOr<std::unique_ptr<Rendezvous>> Join(
      std::shared_ptr<GroupStore> store, int64_t generation,
      const RendezvousOptions& options, const v1::StartupFacts& facts,
      std::function<absl::Status()> keep_waiting);
  // A group that lives as long as the process: its own store connection
  // (served on rank 0) and generation 0.
  static absl::StatusOr<std::unique_ptr<Rendezvous>> Connect(
      const RankEnv& env, const RendezvousOptions& options,
      const v1::StartupFacts& facts);

  const RankEnv& env() const { return store_->env(); }
  int64_t generation() const { return generation_; }
  const RendezvousOptions& options() const { return options_; }
  // The store under this generation's keys.
  const c10::intrusive_ptr<c10d::Store>& store() const { return scoped_; }
  // Gloo over every rank.
  const ProcessGroupPtr& world() const { return world_; }
  // Gloo over every rank, used only by the control channel.
  const ProcessGroupPtr& control() const { return control_; }
  Watchdog& watchdog() { return *watchdog_; }

  // Rank 0, after the group broke: keeps serving the store for one
  // collective timeout plus the watchdog's window, so every survivor can
  // finish its failed collective and still name the lost rank. Returns at
  // once on other ranks.
  void KeepStoreForSurvivors();

  // After the group broke, before this is destroyed. Destroying a Gloo
  // group joins its worker thread, which may wait in a collective with a
  // lost or hung rank until Gloo's timeout; a re-formed group must not wait
  // for that. So a thread of its own drops this generation's Gloo groups
  // once that timeout has passed (each holds threads and sockets, and a
  // rank that crash-loops re-forms the group again and again). NCCL groups
  // are kept until the process exits.
  void Abandon();

  // A new Gloo group of `size` ranks whose members all call this with the
  // same `prefix` (keys in the store are namespaced by it).
  absl::StatusOr<ProcessGroupPtr> NewGlooGroup(absl::string_view prefix,
                                               int rank_in_group, int size);
  // A new group for tensors of the compute device, formed as NewGlooGroup:
  // NCCL's with nccl_data_group, else Gloo's. FAILED_PRECONDITION when
  // nccl_data_group is set in a build without NCCL.
  absl::StatusOr<ProcessGroupPtr> NewDataGroup(absl::string_view prefix,
                                               int rank_in_group, int size);

 private:
  Rendezvous(std::shared_ptr<GroupStore> store, int64_t generation,
             const RendezvousOptions& options)
      : store_(std::move(store)),
        generation_(generation),
        scoped_(store_->Scoped(generation)),
        options_(options) {}

  // A group made by `create` over the store under `prefix`, kept for
  // Abandon; `backend` names it in the error.
  absl::StatusOr<ProcessGroupPtr> FormGroup(
      absl::string_view backend, absl::string_view prefix, int rank_in_group,
      int size,
      const std::function<ProcessGroupPtr(c10::intrusive_ptr<c10d::Store>)>&
          create);

  std::shared_ptr<GroupStore> store_;
  const int64_t generation_;
  // The store under this generation's keys.
  c10::intrusive_ptr<c10d::Store> scoped_;
  RendezvousOptions options_;
  ProcessGroupPtr world_;
  ProcessGroupPtr control_;
  // Every group formed here, for Abandon.
  std::vector<ProcessGroupPtr> groups_;
  std::unique_ptr<Watchdog> watchdog_;
};

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_RENDEZVOUS_H_
