#ifndef DITSERVE_CORE_PARALLEL_SEQUENCE_PARALLEL_H_
#define DITSERVE_CORE_PARALLEL_SEQUENCE_PARALLEL_H_

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "core/base/status_macros.h"
#include "core/models/sequence_shard.h"
#include "core/parallel/group_collectives.h"
#include "core/parallel/sequence_sharding.h"

namespace ditserve::parallel {

// How every transformer forward of a generation is split over the
// sequence-parallel group (sp = ring × ulysses ranks, whose transformer
// attends through the matching models::Attention).
struct SequenceParallel {
  // This rank's shard of the transformer's attention sequence, from the
  // frozen config's derived shapes.
  parallel::SequenceSharding sharding;
  // The sp group (dist::Axis::kSp) the shards are gathered over.
  parallel::Group group;
  // Where each forward's outputs are gathered: the rank's planned buffer
  // [sp, rows, shard_tokens, channels per token] (engine::kSequenceGather).
  at::Tensor gathered;
};

// A model's forward on one shard: [B, shard.tokens, ...], its output for
// every token of the shard (zeros where the model has none).
using ShardForward =
    std::function<absl::StatusOr<at::Tensor>(const models::SequenceShard&)>;

// `forward_shard` run on this rank's shard (with the padding's key mask,
// on `device`, when the sequence is padded) and its outputs all-gathered
// over the sp group: [B, sequence_tokens, ...], the same on every rank of
// the group. INVALID_ARGUMENT when the split was derived for another
// length than the forward's `sequence_tokens`; else the errors of
// `forward_shard` and of the gather.
absl::StatusOr<at::Tensor> GatherShardedForward(
    const SequenceParallel& sequence_parallel, int64_t batch,
    int64_t sequence_tokens, c10::Device device,
    const ShardForward& forward_shard);

// GatherShardedForward for a transformer whose inputs are `latents`
// [B, C, H, W] cut into patch_size x patch_size image tokens, and whose
// attention sequence is those image tokens followed by `trailing_tokens`
// others (SD3's text; none for PixArt): the gathered outputs of the image
// tokens only, [B, (H / patch_size) (W / patch_size), ...].
absl::StatusOr<at::Tensor> GatherShardedImageTokens(
    const SequenceParallel& sequence_parallel, const at::Tensor& latents,
    int64_t patch_size, int64_t trailing_tokens,
    const ShardForward& forward_shard);

// The output [B, C', H, W] of a transformer over latents (PixArt, SD3) run
// sharded and gathered: `Transformer` has config().patch_size,
// ForwardShard(inputs, shard) and Unpatchify(tokens, grid height, grid
// width); `Inputs` has hidden_states [B, C, H, W]. `trailing_tokens` as for
// GatherShardedImageTokens.
template <typename Transformer, typename Inputs>
absl::StatusOr<at::Tensor> ShardedLatentForward(
    Transformer& transformer, const Inputs& inputs,
    const SequenceParallel& sequence_parallel, int64_t trailing_tokens) {
  const int64_t patch = transformer.config().patch_size;
  ASSIGN_OR_RETURN(
      at::Tensor image_tokens,
      GatherShardedImageTokens(sequence_parallel, inputs.hidden_states, patch,
                               trailing_tokens,
                               [&](const models::SequenceShard& shard) {
                                 return transformer.ForwardShard(inputs, shard);
                               }));
  return transformer.Unpatchify(image_tokens,
                                inputs.hidden_states.size(2) / patch,
                                inputs.hidden_states.size(3) / patch);
}

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_SEQUENCE_PARALLEL_H_
