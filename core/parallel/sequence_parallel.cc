#include "core/parallel/sequence_parallel.h"

#include <torch/torch.h>

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace ditserve::parallel {

absl::StatusOr<at::Tensor> GatherShardedForward(
    const SequenceParallel& sequence_parallel, int64_t batch,
    int64_t sequence_tokens, c10::Device device,
    const ShardForward& forward_shard) {
  const parallel::SequenceSharding& sharding = sequence_parallel.sharding;
  if (sequence_tokens != sharding.sequence_tokens()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the transformer's attention sequence has ", sequence_tokens,
        " tokens; the sequence-parallel split (shapes.sequence_tokens) is "
        "for ",
        sharding.sequence_tokens()));
  }
  models::SequenceShard shard;
  shard.begin = sharding.index() * sharding.shard_tokens();
  shard.tokens = sharding.shard_tokens();
  // Without padding every key is visible: no mask, the attention's fast
  // path. The padding is the same on every rank, so all pass one or none.
  if (sharding.padded_tokens() > sharding.sequence_tokens()) {
    ASSIGN_OR_RETURN(at::Tensor key_mask,
                     sharding.ShardKeyMask(batch, std::nullopt));
    shard.key_mask = key_mask.to(device);
  }
  ASSIGN_OR_RETURN(at::Tensor output, forward_shard(shard));
  return sharding.Gather(sequence_parallel.group, output,
                         sequence_parallel.gathered);
}

absl::StatusOr<at::Tensor> GatherShardedImageTokens(
    const SequenceParallel& sequence_parallel, const at::Tensor& latents,
    int64_t patch_size, int64_t trailing_tokens,
    const ShardForward& forward_shard) {
  const int64_t image_tokens =
      (latents.size(2) / patch_size) * (latents.size(3) / patch_size);
  ASSIGN_OR_RETURN(at::Tensor sequence,
                   GatherShardedForward(sequence_parallel, latents.size(0),
                                        image_tokens + trailing_tokens,
                                        latents.device(), forward_shard));
  return sequence.narrow(1, 0, image_tokens);
}

}  // namespace ditserve::parallel
