#ifndef DITSERVE_CORE_FAMILIES_FLUX_FLUX_SEQUENCE_PARALLEL_H_
#define DITSERVE_CORE_FAMILIES_FLUX_FLUX_SEQUENCE_PARALLEL_H_

#include <ATen/core/Tensor.h>

#include "absl/status/statusor.h"
#include "core/families/flux/flux_transformer_2d_model.h"
#include "core/parallel/sequence_parallel.h"

namespace ditserve::families {

// The transformer's output for `inputs` ([B, S_img, patch^2 *
// out_channels], as Forward returns it), computed on this rank's shard of
// the joint sequence [text, image] and all-gathered over the sp group, so
// that every rank of the group holds it. Errors as GatherShardedForward and
// ForwardShard.
absl::StatusOr<at::Tensor> ShardedFluxForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const parallel::SequenceParallel& sequence_parallel);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_FLUX_FLUX_SEQUENCE_PARALLEL_H_
