#include "core/engine/rank_runtime.h"

#include <torch/torch.h>

#include <utility>

#include "core/base/status_macros.h"

namespace ditserve::engine {

absl::StatusOr<std::unique_ptr<RankRuntime>> RankRuntime::Join(
    std::shared_ptr<dist::GroupStore> store, int64_t generation,
    const v1::ParallelConfig& parallel, const dist::RendezvousOptions& options,
    const v1::StartupFacts& facts, std::function<absl::Status()> keep_waiting) {
  const dist::RankEnv env = store->env();
  std::unique_ptr<RankRuntime> runtime(new RankRuntime());
  ASSIGN_OR_RETURN(std::unique_ptr<dist::Rendezvous> rendezvous,
                   dist::Rendezvous::Join(std::move(store), generation, options,
                                          facts, std::move(keep_waiting)));
  runtime->rendezvous_ = std::move(rendezvous);
  ASSIGN_OR_RETURN(dist::Mesh mesh, dist::Mesh::Create(parallel));
  runtime->mesh_.emplace(std::move(mesh));
  ASSIGN_OR_RETURN(
      dist::MeshGroups groups,
      dist::MeshGroups::Create(*runtime->mesh_, *runtime->rendezvous_));
  runtime->groups_.emplace(std::move(groups));
  dist::ControlChannelOptions channel_options;
  channel_options.timeout = options.collective_timeout;
  runtime->channel_ = std::make_unique<dist::ControlChannel>(
      runtime->rendezvous_->control(), env.rank, env.world_size,
      &runtime->rendezvous_->watchdog(), channel_options);
  return runtime;
}

parallel::SequenceParallelOptions RankRuntime::sequence_parallel_options()
    const {
  return {.timeout = rendezvous_->options().collective_timeout,
          .watchdog = &rendezvous_->watchdog()};
}

RankLoop& RankRuntime::StartLoop(RankProgram& program,
                                 const families::ModelDimensions& dimensions,
                                 const models::Placement& placement,
                                 RankLoopOptions loop_options) {
  EngineOptions engine_options;
  engine_options.dimensions = dimensions;
  engine_options.tensor_options =
      torch::TensorOptions().device(placement.device).dtype(placement.dtype);
  engine_options.collective_timeout = rendezvous_->options().collective_timeout;
  run_failures_ = std::make_unique<dist::RunFailureBoard>(rendezvous_->store(),
                                                          env().world_size);
  engine_options.run_failures = run_failures_.get();
  engine_ = std::make_unique<Engine>(env().rank, *mesh_, *groups_, *channel_,
                                     &rendezvous_->watchdog(), program,
                                     engine_options);
  loop_options.device = placement.device;
  loop_ =
      std::make_unique<RankLoop>(*channel_, *engine_, std::move(loop_options));
  return *loop_;
}

std::vector<int> RankRuntime::FindLostRanks() const {
  return rendezvous_->watchdog().FindLostRanks();
}

}  // namespace ditserve::engine
