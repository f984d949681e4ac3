#include "core/engine/sequence_parallel_for.h"

#include "core/base/status_macros.h"
#include "core/engine/buffer_plan.h"
#include "core/parallel/sequence_sharding.h"

namespace ditserve::engine {

absl::StatusOr<std::optional<parallel::SequenceParallel>> SequenceParallelFor(
    const RankContext& context) {
  if (!GathersSequenceShards(context.config.parallel())) return std::nullopt;
  const int degree = context.mesh.Degree(dist::Axis::kSp);
  ASSIGN_OR_RETURN(
      parallel::SequenceSharding sharding,
      parallel::SequenceSharding::Create(
          context.config.shapes(), degree,
          context.mesh.IndexInGroup(dist::Axis::kSp, context.rank)));
  ASSIGN_OR_RETURN(at::Tensor gathered, context.buffers.Get(kSequenceGather));
  return parallel::SequenceParallel{
      .sharding = sharding,
      .group = {.group = context.groups.group(dist::Axis::kSp),
                .context = context.collective_on(dist::Axis::kSp)},
      .gathered = gathered};
}

}  // namespace ditserve::engine
