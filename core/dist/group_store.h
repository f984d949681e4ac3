#ifndef DITSERVE_CORE_DIST_GROUP_STORE_H_
#define DITSERVE_CORE_DIST_GROUP_STORE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/dist/rank_env.h"

namespace ditserve::dist {

// The generation counter, read through an unscoped connection to the store.
// Throws what the store throws.
int64_t ReadCurrentGeneration(c10d::Store& store);

// Rank 0: adds one to the generation counter and returns the new
// generation. Throws what the store throws.
int64_t OpenNextGeneration(c10d::Store& store);

// `store` with its keys under `generation`'s namespace. Each key first
// written through it is also listed in the generation's ledger (apart from
// the RunFailureBoard's, which deletes its own), so that ForgetGeneration
// finds the keys that Gloo, NCCL and every rank wrote: a c10d store cannot
// list its keys.
c10::intrusive_ptr<c10d::Store> ScopeToGeneration(
    c10::intrusive_ptr<c10d::Store> store, int64_t generation);

// Deletes every key of `generation` of a group of `world_size` ranks, which
// no rank may use any more. Errors: UNAVAILABLE when the store cannot be
// reached.
absl::Status ForgetGeneration(const c10::intrusive_ptr<c10d::Store>& store,
                              int64_t generation, int world_size);

// The c10d store a rank keeps for its whole life (rank 0 serves it at
// MASTER_ADDR:MASTER_PORT) and the generation counter in it. Each formation
// of the group is one generation whose keys (start-up facts, Gloo's
// rendezvous, heartbeats) live in their own namespace, so that a group
// re-formed after a rank was lost never reads a retired one's keys. Rank 0
// opens each generation; every other rank joins the one that is forming.
class GroupStore {
 public:
  // Serves (rank 0) or reaches the store within `timeout`. Errors:
  // UNAVAILABLE naming the address.
  static absl::StatusOr<std::shared_ptr<GroupStore>> Connect(
      const RankEnv& env, std::chrono::milliseconds timeout);

  const RankEnv& env() const { return env_; }
  // Where the store is, "MASTER_ADDR:MASTER_PORT", for messages.
  std::string address() const;
  // The store with its keys under `generation`'s namespace.
  c10::intrusive_ptr<c10d::Store> Scoped(int64_t generation) const;
  // Another connection to the store, not scoped, so that its traffic (the
  // watchdog's heartbeats) never queues behind a collective's.
  absl::StatusOr<c10::intrusive_ptr<c10d::Store>> NewConnection() const;

  absl::StatusOr<int64_t> Current() const;
  // Rank 0: opens the generation after the current one and returns it. The
  // ranks of the current one stop waiting on it (Watchdog::SupersededBy).
  absl::StatusOr<int64_t> OpenNext();
  // Rank 0: every rank joined `generation`, so a rank that starts from now on
  // waits for the next one.
  absl::Status MarkFormed(int64_t generation);
  // Rank 0, once `generation` formed: deletes the keys of every generation
  // before it. Every rank left those to join this one, and the store lives
  // as long as rank 0, through any number of re-formations.
  absl::Status ForgetGenerationsBefore(int64_t generation);
  // Ranks > 0: the generation to join, newer than `after` (-1: any): the
  // current one while it is forming, else the next one rank 0 opens.
  // Errors: UNAVAILABLE when the current generation stays formed for
  // `timeout` without a newer one (rank 0 has not noticed that this rank's
  // previous process is gone, or another process runs as this rank) or the
  // store cannot be reached. While rank 0 still tries to form the current
  // one, the wait goes on: that attempt is bounded by rank 0's timeouts.
  absl::StatusOr<int64_t> GenerationToJoin(int64_t after,
                                           std::chrono::milliseconds timeout);

 private:
  GroupStore(const RankEnv& env, std::chrono::milliseconds timeout)
      : env_(env), timeout_(timeout) {}
  absl::StatusOr<bool> IsFormed(int64_t generation) const;

  const RankEnv env_;
  const std::chrono::milliseconds timeout_;
  c10::intrusive_ptr<c10d::Store> store_;
  // The generations below this one have been forgotten.
  int64_t forgotten_below_ = 0;
};

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_GROUP_STORE_H_
