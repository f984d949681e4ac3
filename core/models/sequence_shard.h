#ifndef DITSERVE_CORE_MODELS_SEQUENCE_SHARD_H_
#define DITSERVE_CORE_MODELS_SEQUENCE_SHARD_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"

namespace ditserve::models {

// One rank's contiguous shard of a transformer's attention sequence under
// sequence parallelism. The sequence is the model's parts in the model's
// order (FLUX: [text, image]; SD3: [image, text]; PixArt: [image]),
// zero-padded at the end to a multiple of the sequence-parallel degree
// (parallel::SequenceSharding decides the split; models sit below parallel
// and only see the numbers).
struct SequenceShard {
  // Sequence position of the shard's first token, and its token count;
  // positions from the parts' total on are padding.
  int64_t begin = 0;
  int64_t tokens = 0;
  // Bool [B, tokens], false for padded keys; nullopt when the sequence has
  // no padding. Every rank of the sequence-parallel group passes one or none,
  // since the attention's collectives carry it.
  std::optional<at::Tensor> key_mask;
};

// Tokens [begin, begin + tokens) of one part of the sequence.
struct TokenSpan {
  int64_t begin = 0;
  int64_t tokens = 0;
};

// Where a shard falls in a sequence made of parts.
struct ShardParts {
  // One span per part, in the sequence's order: the part's tokens inside
  // the shard, numbered within the part (empty when the shard misses it).
  std::vector<TokenSpan> parts;
  // The shard's tokens beyond the last part.
  int64_t padding = 0;
};

// How `shard` splits over parts of `part_tokens` tokens each, in order.
ShardParts SplitShard(const SequenceShard& shard,
                      const std::vector<int64_t>& part_tokens);

// x [B, S, C] with `before` zero tokens in front and `after` behind: how a
// shard's streams carry its padding, and how a model's output for one part
// takes its place among the shard's tokens.
at::Tensor PadTokens(const at::Tensor& x, int64_t before, int64_t after);

// INVALID_ARGUMENT when the shard has begin < 0 or no token, or a key mask
// that is not [batch, shard.tokens].
absl::Status CheckSequenceShard(const SequenceShard& shard, int64_t batch);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_SEQUENCE_SHARD_H_
