#include "core/engine/rank_runtime.h"

#include <torch/torch.h>

#include <utility>

#include "core/base/status_macros.h"

namespace ditserve::engine {

absl::StatusOr<std::unique_ptr<RankRuntime>> RankRuntime::Connect(
    const dist::RankEnv& env, const v1::ParallelConfig& parallel,
    const dist::RendezvousOptions& options) {
  std::unique_ptr<RankRuntime> runtime(new RankRuntime());
  ASSIGN_OR_RETURN(std::unique_ptr<dist::Rendezvous> rendezvous,
                   dist::Rendezvous::Connect(env, options));
  runtime->rendezvous_ = std::move(rendezvous);
  ASSIGN_OR_RETURN(dist::Mesh mesh, dist::Mesh::Create(parallel));
  runtime->mesh_.emplace(std::move(mesh));
  ASSIGN_OR_RETURN(
      dist::MeshGroups groups,
      dist::MeshGroups::Create(*runtime->mesh_, *runtime->rendezvous_));
  runtime->groups_.emplace(std::move(groups));
  dist::ControlChannelOptions channel_options;
  channel_options.timeout = options.collective_timeout;
  dist::Rendezvous* rendezvous_ptr = runtime->rendezvous_.get();
  runtime->channel_ = std::make_unique<dist::ControlChannel>(
      runtime->rendezvous_->control(), env.rank, env.world_size,
      [rendezvous_ptr] { return rendezvous_ptr->watchdog().FindLostRanks(); },
      channel_options);
  return runtime;
}

parallel::SequenceParallelOptions RankRuntime::sequence_parallel_options()
    const {
  dist::Rendezvous* rendezvous = rendezvous_.get();
  return {.timeout = rendezvous->options().collective_timeout,
          .find_lost_ranks = [rendezvous] {
            return rendezvous->watchdog().FindLostRanks();
          }};
}

RankLoop& RankRuntime::StartLoop(RankProgram& program,
                                 const families::ModelDimensions& dimensions,
                                 RankLoopOptions loop_options) {
  EngineOptions engine_options;
  engine_options.dimensions = dimensions;
  engine_options.tensor_options = torch::TensorOptions().dtype(torch::kFloat32);
  engine_options.collective_timeout = rendezvous_->options().collective_timeout;
  dist::Rendezvous* rendezvous = rendezvous_.get();
  engine_ = std::make_unique<Engine>(
      env().rank, *mesh_, *groups_, *channel_,
      [rendezvous] { return rendezvous->watchdog().FindLostRanks(); }, program,
      engine_options);
  loop_ =
      std::make_unique<RankLoop>(*channel_, *engine_, std::move(loop_options));
  return *loop_;
}

std::vector<int> RankRuntime::FindLostRanks() const {
  return rendezvous_->watchdog().FindLostRanks();
}

}  // namespace ditserve::engine
