#ifndef DITSERVE_CORE_PIPELINES_FLUX_FLUX_SEQUENCE_PARALLEL_H_
#define DITSERVE_CORE_PIPELINES_FLUX_FLUX_SEQUENCE_PARALLEL_H_

#include <ATen/core/Tensor.h>

#include "absl/status/statusor.h"
#include "core/models/flux/flux_transformer_2d_model.h"
#include "core/parallel/group_collectives.h"
#include "core/parallel/sequence_sharding.h"

namespace ditserve::pipelines {

// How every transformer forward of a generation is split over the
// sequence-parallel group (sp = ring × ulysses ranks, whose transformer
// attends through the matching parallel::Attention).
struct FluxSequenceParallel {
  // This rank's shard of the joint sequence [text, image], from the frozen
  // config's derived shapes.
  parallel::SequenceSharding sharding;
  // The sp group (dist::Axis::kSp) the shards are gathered over.
  parallel::Group group;
};

// The transformer's output for `inputs` ([B, S_img, patch^2 *
// out_channels], as Forward returns it), computed on this rank's shard and
// all-gathered over the sp group, so that every rank of the group holds it.
// INVALID_ARGUMENT when the sharding was derived for another sequence length
// than the inputs' text + image tokens; else the errors of ForwardShard and
// of the gather.
absl::StatusOr<at::Tensor> ShardedFluxForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const FluxSequenceParallel& sequence_parallel);

}  // namespace ditserve::pipelines

#endif  // DITSERVE_CORE_PIPELINES_FLUX_FLUX_SEQUENCE_PARALLEL_H_
