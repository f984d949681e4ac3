#include "core/models/sequence_shard.h"

#include <ATen/ops/constant_pad_nd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/models/tensor_checks.h"

namespace ditserve::models {

ShardParts SplitShard(const SequenceShard& shard,
                      const std::vector<int64_t>& part_tokens) {
  const int64_t end = shard.begin + shard.tokens;
  ShardParts split;
  split.padding = shard.tokens;
  int64_t part_begin = 0;
  for (const int64_t tokens : part_tokens) {
    TokenSpan span;
    span.begin = std::clamp<int64_t>(shard.begin - part_begin, 0, tokens);
    span.tokens = std::clamp<int64_t>(end - part_begin, 0, tokens) - span.begin;
    split.parts.push_back(span);
    split.padding -= span.tokens;
    part_begin += tokens;
  }
  return split;
}

at::Tensor PadTokens(const at::Tensor& x, int64_t before, int64_t after) {
  return at::constant_pad_nd(x, {0, 0, before, after}, 0);
}

absl::Status CheckSequenceShard(const SequenceShard& shard, int64_t batch) {
  if (shard.begin < 0 || shard.tokens < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sequence shard begin ", shard.begin, ", tokens ", shard.tokens,
        ": expected begin >= 0 and at least one token"));
  }
  if (!shard.key_mask.has_value()) return absl::OkStatus();
  return CheckShape("key_mask", *shard.key_mask, {batch, shard.tokens});
}

}  // namespace ditserve::models
