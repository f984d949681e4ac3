#include "core/pipelines/flux/flux_sequence_parallel.h"

#include <torch/torch.h>

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::pipelines {

absl::StatusOr<at::Tensor> ShardedFluxForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const FluxSequenceParallel& sequence_parallel) {
  const parallel::SequenceSharding& sharding = sequence_parallel.sharding;
  const int64_t batch = inputs.hidden_states.size(0);
  const int64_t text_tokens = inputs.encoder_hidden_states.size(1);
  const int64_t joint_tokens = text_tokens + inputs.hidden_states.size(1);
  if (joint_tokens != sharding.sequence_tokens()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the joint sequence has ", text_tokens, " text + ",
        inputs.hidden_states.size(1), " image tokens = ", joint_tokens,
        "; the sequence-parallel split (shapes.sequence_tokens) is for ",
        sharding.sequence_tokens()));
  }
  models::FluxSequenceShard shard;
  shard.begin = sharding.index() * sharding.shard_tokens();
  shard.tokens = sharding.shard_tokens();
  // Without padding every key is visible: no mask, the attention's fast
  // path. The padding is the same on every rank, so all pass one or none.
  if (sharding.padded_tokens() > sharding.sequence_tokens()) {
    absl::StatusOr<at::Tensor> key_mask =
        sharding.ShardKeyMask(batch, std::nullopt);
    if (!key_mask.ok()) return key_mask.status();
    shard.key_mask = key_mask->to(inputs.hidden_states.device());
  }
  absl::StatusOr<at::Tensor> output = transformer.ForwardShard(inputs, shard);
  if (!output.ok()) return output.status();
  absl::StatusOr<at::Tensor> joint =
      sharding.Gather(sequence_parallel.group, *output, /*dim=*/1);
  if (!joint.ok()) return joint.status();
  return joint->narrow(1, text_tokens, joint_tokens - text_tokens);
}

}  // namespace ditserve::pipelines
