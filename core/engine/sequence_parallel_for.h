#ifndef DITSERVE_CORE_ENGINE_SEQUENCE_PARALLEL_FOR_H_
#define DITSERVE_CORE_ENGINE_SEQUENCE_PARALLEL_FOR_H_

#include <optional>

#include "absl/status/statusor.h"
#include "core/engine/rank_program.h"
#include "core/parallel/sequence_parallel.h"

namespace ditserve::engine {

// This rank's shard of every transformer forward of the frozen config, and
// the planned buffer its outputs are gathered into, when
// GathersSequenceShards, else nullopt (the whole sequence on every rank, or
// PipeFusion stages that split it themselves: StagesFor). INVALID_ARGUMENT when
// the config's derived shapes do not split over the mesh's sp degree.
absl::StatusOr<std::optional<parallel::SequenceParallel>> SequenceParallelFor(
    const RankContext& context);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_SEQUENCE_PARALLEL_FOR_H_
