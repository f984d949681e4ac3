#include "core/families/flux/flux_sequence_parallel.h"

#include <torch/torch.h>

#include "core/base/status_macros.h"

namespace ditserve::families {

absl::StatusOr<at::Tensor> ShardedFluxForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const parallel::SequenceParallel& sequence_parallel) {
  const int64_t text_tokens = inputs.encoder_hidden_states.size(1);
  const int64_t image_tokens = inputs.hidden_states.size(1);
  ASSIGN_OR_RETURN(
      at::Tensor joint,
      parallel::GatherShardedForward(
          sequence_parallel, inputs.hidden_states.size(0),
          text_tokens + image_tokens, inputs.hidden_states.device(),
          [&](const models::SequenceShard& shard) {
            return transformer.ForwardShard(inputs, shard);
          }));
  return joint.narrow(1, text_tokens, image_tokens);
}

}  // namespace ditserve::families
