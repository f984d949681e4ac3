#ifndef DITSERVE_CORE_PARALLEL_SEQUENCE_SHARDING_H_
#define DITSERVE_CORE_PARALLEL_SEQUENCE_SHARDING_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "core/parallel/group_collectives.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::parallel {

// How a joint (text + image) sequence is split over the sp = ring × ulysses
// ranks: zero-padded at the end to padded_sequence_tokens (a multiple of sp,
// so any length works with any degree), padded keys masked out of
// attention, shard i (shard_tokens contiguous tokens) on the rank with sp
// index i, padding dropped again when the shards are gathered.
class SequenceSharding {
 public:
  // `shapes`: the frozen config's derived shapes (sequence_tokens,
  // padded_sequence_tokens, shard_tokens); `sp_index`: this rank's index in
  // its sp group (dist::Mesh::IndexInGroup(Axis::kSp, rank)). INVALID_ARGUMENT
  // naming the field when the shapes do not split into `sp_degree` shards or
  // the index is outside [0, sp_degree).
  static absl::StatusOr<SequenceSharding> Create(
      const v1::DerivedShapes& shapes, int sp_degree, int sp_index);

  int64_t sequence_tokens() const { return sequence_tokens_; }
  int64_t padded_tokens() const { return shard_tokens_ * degree_; }
  int64_t shard_tokens() const { return shard_tokens_; }
  int degree() const { return degree_; }
  int index() const { return index_; }

  // `sequence` with sequence_tokens along `dim`, zero-padded to
  // padded_tokens. INVALID_ARGUMENT when its length along `dim` is not
  // sequence_tokens.
  absl::StatusOr<at::Tensor> Pad(const at::Tensor& sequence, int64_t dim) const;
  // This rank's shard_tokens of the padded `sequence` along `dim`.
  absl::StatusOr<at::Tensor> Shard(const at::Tensor& sequence,
                                   int64_t dim) const;
  // Bool [batch, shard_tokens]: the key mask of this rank's shard, false for
  // padding and wherever `user_mask` (bool [batch, sequence_tokens], true =
  // attend) is false.
  absl::StatusOr<at::Tensor> ShardKeyMask(
      int64_t batch, const std::optional<at::Tensor>& user_mask) const;
  // `padded` with padded_tokens along `dim`, cut back to sequence_tokens.
  absl::StatusOr<at::Tensor> Unpad(const at::Tensor& padded, int64_t dim) const;
  // Every sp rank's `shard` [batch, shard_tokens, channels] all-gathered
  // over `sp_group` into the leading `batch` rows of `gathered` (a planned
  // buffer [degree, rows, shard_tokens, channels], rows >= batch), in sp
  // order, padding dropped: a new tensor [batch, sequence_tokens, channels]
  // of the shard's type. Errors: INVALID_ARGUMENT for a shard that does not
  // fit `gathered` or a group whose size is not the degree, else the failed
  // collective's Status.
  absl::StatusOr<at::Tensor> Gather(const Group& sp_group,
                                    const at::Tensor& shard,
                                    const at::Tensor& gathered) const;

 private:
  SequenceSharding(int64_t sequence_tokens, int64_t shard_tokens, int degree,
                   int index)
      : sequence_tokens_(sequence_tokens),
        shard_tokens_(shard_tokens),
        degree_(degree),
        index_(index) {}

  int64_t sequence_tokens_;
  int64_t shard_tokens_;
  int degree_;
  int index_;
};

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_SEQUENCE_SHARDING_H_
