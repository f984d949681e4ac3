#ifndef DITSERVE_CORE_ENGINE_DP_FAILURE_BOARD_H_
#define DITSERVE_CORE_ENGINE_DP_FAILURE_BOARD_H_

// Where a rank other than 0 posts that its dp group's share of a run failed,
// for rank 0 to read at its next step boundary and stop every rank there
// (engine::RunDpGroup). The boundary is rank 0's broadcast, which carries
// nothing back, so the post goes out of band: into the generation's store.

#include <cstdint>
#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ditserve::engine {

class DpFailureBoard {
 public:
  // `store`: the generation's, so that a re-formed group never reads a
  // retired one's posts.
  explicit DpFailureBoard(c10::intrusive_ptr<c10d::Store> store);

  // Posts that `rank`'s share of the group's `run`-th run (counted from 0
  // alike on every rank) failed with `failure`.
  absl::Status Post(int64_t run, int rank, const absl::Status& failure);
  // What was posted for `run` ("rank 2: INTERNAL: ..."), or nullopt; does
  // not wait.
  absl::StatusOr<std::optional<std::string>> Read(int64_t run);

 private:
  c10::intrusive_ptr<c10d::Store> store_;
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_DP_FAILURE_BOARD_H_
