#ifndef DITSERVE_CORE_ENGINE_RANK_RUNTIME_H_
#define DITSERVE_CORE_ENGINE_RANK_RUNTIME_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/dist/control_channel.h"
#include "core/dist/group_store.h"
#include "core/dist/mesh.h"
#include "core/dist/mesh_groups.h"
#include "core/dist/rank_env.h"
#include "core/dist/rank_phase.h"
#include "core/dist/rendezvous.h"
#include "core/dist/run_failure_board.h"
#include "core/engine/engine.h"
#include "core/engine/rank_loop.h"
#include "core/models/component_weights.h"
#include "core/parallel/make_attention.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::engine {

// One rank's membership of the group: the store and groups of the
// rendezvous, the mesh sub-groups, the control channel, and the engine and
// rank loop that run requests over them.
class RankRuntime {
 public:
  // Joins `generation` in `store` (dist::Rendezvous::Join): blocks until
  // every rank joined after all agreed on `facts` (see DescribeStartup).
  static absl::StatusOr<std::unique_ptr<RankRuntime>> Join(
      std::shared_ptr<dist::GroupStore> store, int64_t generation,
      const v1::ParallelConfig& parallel,
      const dist::RendezvousOptions& options, const v1::StartupFacts& facts,
      std::function<absl::Status()> keep_waiting);

  const dist::RankEnv& env() const { return rendezvous_->env(); }
  int64_t generation() const { return rendezvous_->generation(); }
  const dist::Mesh& mesh() const { return *mesh_; }
  const dist::MeshGroups& groups() const { return *groups_; }
  // What bounds and explains the sequence-parallel attention's collectives:
  // the rendezvous' collective timeout and the ranks its watchdog lost.
  parallel::SequenceParallelOptions sequence_parallel_options() const;
  // Other ranks whose heartbeats stopped (the watchdog's view); blocks for
  // its observation window.
  std::vector<int> FindLostRanks() const;

  // dist::FinishRankPhase over this generation.
  absl::Status FinishPhase(const dist::RankPhase& phase,
                           const absl::Status& own) {
    return dist::FinishRankPhase(*rendezvous_, phase, own);
  }

  // After the group broke, before this is destroyed (dist::Rendezvous::
  // Abandon).
  void Abandon() { rendezvous_->Abandon(); }

  // Builds this rank's engine and rank loop for `program` (which must
  // outlive the runtime); call once. Rank 0 drives the loop, the workers
  // Follow it.
  RankLoop& StartLoop(RankProgram& program,
                      const families::ModelDimensions& dimensions,
                      const models::Placement& placement,
                      RankLoopOptions loop_options);

 private:
  RankRuntime() = default;

  std::unique_ptr<dist::Rendezvous> rendezvous_;
  std::optional<dist::Mesh> mesh_;
  std::optional<dist::MeshGroups> groups_;
  std::unique_ptr<dist::ControlChannel> channel_;
  std::unique_ptr<dist::RunFailureBoard> run_failures_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<RankLoop> loop_;
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_RANK_RUNTIME_H_
