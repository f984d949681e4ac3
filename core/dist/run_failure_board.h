#ifndef DITSERVE_CORE_DIST_RUN_FAILURE_BOARD_H_
#define DITSERVE_CORE_DIST_RUN_FAILURE_BOARD_H_

// Where a rank posts that its share of a run failed, for the ranks still in
// that run to find out without a collective: rank 0 reads it at its step
// boundaries to stop the other dp groups (engine::RunDpGroup), and the failed
// rank's own group peers, which would otherwise wait for it until the
// collective timeout, read it through their watchdogs. Step boundaries are
// rank 0's broadcasts, which carry nothing back, so the post goes out of
// band: into the generation's store, so that a re-formed group never reads a
// retired one's posts.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ditserve::dist {

// Every key of the board starts with this.
inline constexpr char kRunFailureKeyPrefix[] = "run_failure/";

class RunFailureBoard {
 public:
  RunFailureBoard(c10::intrusive_ptr<c10d::Store> store, int world_size);

  // Posts that `rank`'s share of the group's `run`-th run (counted from 0
  // alike on every rank) failed with `failure`; returns once the store holds
  // it, so that a read after this rank's next collective finds it.
  absl::Status Post(int64_t run, int rank, const absl::Status& failure);
  // How many posts `run` has had; does not wait. One store round trip while
  // there are none, two after.
  absl::StatusOr<int64_t> Count(int64_t run);
  // What was posted for `run` so far, by rank ("INTERNAL: ..."); does not
  // wait. One store round trip while nothing was posted.
  absl::StatusOr<std::map<int, std::string>> Read(int64_t run);
  // What `rank` posted for `run`, if it did; does not wait. At most two
  // store round trips.
  absl::StatusOr<std::optional<std::string>> ReadRank(int64_t run, int rank);
  // Deletes what was posted for `run`, which every rank must be past: the
  // store outlives many runs. One store round trip while nothing was posted.
  absl::Status Forget(int64_t run);
  // Deletes what Forget leaves, the posts of the last runs, once no rank
  // uses the board's generation any more (ForgetGeneration).
  absl::Status ForgetNewest();

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  int world_size_;
};

// "rank 2: INTERNAL: ...; rank 3: ..." for posts as Read returns them.
std::string DescribePosts(const std::map<int, std::string>& posts);

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_RUN_FAILURE_BOARD_H_
