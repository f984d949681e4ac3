#include "core/engine/sequence_parallel_for.h"

#include "core/base/status_macros.h"
#include "core/parallel/sequence_sharding.h"

namespace ditserve::engine {

absl::StatusOr<std::optional<parallel::SequenceParallel>> SequenceParallelFor(
    const RankContext& context) {
  const int degree = context.mesh.Degree(dist::Axis::kSp);
  // Under PipeFusion the stages split each forward themselves (StagesFor).
  if (degree == 1 || context.mesh.Degree(dist::Axis::kPp) > 1) {
    return std::nullopt;
  }
  ASSIGN_OR_RETURN(
      parallel::SequenceSharding sharding,
      parallel::SequenceSharding::Create(
          context.config.shapes(), degree,
          context.mesh.IndexInGroup(dist::Axis::kSp, context.rank)));
  return parallel::SequenceParallel{
      .sharding = sharding,
      .group = {.group = context.groups.group(dist::Axis::kSp),
                .context = context.collective_on(dist::Axis::kSp)}};
}

}  // namespace ditserve::engine
