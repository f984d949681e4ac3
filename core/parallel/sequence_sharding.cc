#include "core/parallel/sequence_sharding.h"

#include <torch/torch.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"

namespace ditserve::parallel {
namespace {

absl::Status CheckLength(const at::Tensor& tensor, int64_t dim,
                         int64_t expected, absl::string_view what) {
  if (dim < 0 || dim >= tensor.dim()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sequence dimension ", dim, " is outside the ",
                     tensor.dim(), "-d ", what, " tensor"));
  }
  if (tensor.size(dim) != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has ", tensor.size(dim),
                     " tokens along dimension ", dim, "; expected ", expected));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SequenceSharding> SequenceSharding::Create(
    const v1::DerivedShapes& shapes, int sp_degree, int sp_index) {
  if (sp_degree < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sequence-parallel degree ", sp_degree, " must be at least 1"));
  }
  if (sp_index < 0 || sp_index >= sp_degree) {
    return absl::InvalidArgumentError(absl::StrCat("sequence-parallel index ",
                                                   sp_index, " is outside [0, ",
                                                   sp_degree, ")"));
  }
  const int64_t sequence = shapes.sequence_tokens();
  const int64_t padded = shapes.padded_sequence_tokens();
  const int64_t shard = shapes.shard_tokens();
  if (sequence < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shapes.sequence_tokens is ", sequence, "; expected at least 1"));
  }
  if (padded != shard * sp_degree) {
    return absl::InvalidArgumentError(
        absl::StrCat("shapes.padded_sequence_tokens (", padded,
                     ") is not shapes.shard_tokens (", shard,
                     ") x sequence-parallel degree (", sp_degree, ")"));
  }
  if (padded < sequence || padded - sequence >= sp_degree) {
    return absl::InvalidArgumentError(
        absl::StrCat("shapes.padded_sequence_tokens (", padded,
                     ") is not shapes.sequence_tokens (", sequence,
                     ") rounded up to a multiple of ", sp_degree));
  }
  return SequenceSharding(sequence, shard, sp_degree, sp_index);
}

absl::StatusOr<at::Tensor> SequenceSharding::Pad(const at::Tensor& sequence,
                                                 int64_t dim) const {
  RETURN_IF_ERROR(CheckLength(sequence, dim, sequence_tokens_, "sequence"));
  std::vector<int64_t> padding_shape = sequence.sizes().vec();
  padding_shape[dim] = padded_tokens() - sequence_tokens_;
  return at::cat({sequence, at::zeros(padding_shape, sequence.options())}, dim);
}

absl::StatusOr<at::Tensor> SequenceSharding::Shard(const at::Tensor& sequence,
                                                   int64_t dim) const {
  ASSIGN_OR_RETURN(at::Tensor padded, Pad(sequence, dim));
  return padded.narrow(dim, index_ * shard_tokens_, shard_tokens_).contiguous();
}

absl::StatusOr<at::Tensor> SequenceSharding::ShardKeyMask(
    int64_t batch, const std::optional<at::Tensor>& user_mask) const {
  at::Tensor mask = at::ones({batch, sequence_tokens_}, at::kBool);
  if (user_mask.has_value()) {
    if (user_mask->dim() != 2 || user_mask->size(0) != batch) {
      return absl::InvalidArgumentError(
          absl::StrCat("user key mask has shape ", c10::str(user_mask->sizes()),
                       "; expected [", batch, ", ", sequence_tokens_, "]"));
    }
    RETURN_IF_ERROR(
        CheckLength(*user_mask, 1, sequence_tokens_, "user key mask"));
    mask = user_mask->to(at::kBool);
  }
  // Zero padding is false: padded keys are never attended to.
  return Shard(mask, /*dim=*/1);
}

absl::StatusOr<at::Tensor> SequenceSharding::Unpad(const at::Tensor& padded,
                                                   int64_t dim) const {
  RETURN_IF_ERROR(CheckLength(padded, dim, padded_tokens(), "padded sequence"));
  return padded.narrow(dim, 0, sequence_tokens_);
}

absl::StatusOr<at::Tensor> SequenceSharding::Gather(
    const Group& sp_group, const at::Tensor& shard,
    const at::Tensor& gathered) const {
  if (sp_group.size() != degree_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the ", sp_group.context.group_name, " group has ", sp_group.size(),
        " ranks; the sequence is split over ", degree_));
  }
  const bool fits =
      shard.dim() == 3 && gathered.dim() == 4 && gathered.size(0) == degree_ &&
      shard.size(0) <= gathered.size(1) && shard.size(1) == shard_tokens_ &&
      gathered.size(2) == shard_tokens_ && shard.size(2) == gathered.size(3);
  if (!fits) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shard ", c10::str(shard.sizes()), " does not fit the planned gather ",
        c10::str(gathered.sizes()), ": expected [at most rows, shard_tokens ",
        shard_tokens_, ", channels] into [sp degree ", degree_,
        ", rows, shard_tokens, channels]"));
  }
  return base::Guarded("gathering the sequence shards", [&] {
    const int64_t batch = shard.size(0);
    std::vector<at::Tensor> shards;
    for (int64_t sp_index = 0; sp_index < degree_; ++sp_index) {
      shards.push_back(gathered[sp_index].narrow(0, 0, batch));
    }
    AllGatherInto(sp_group, "all-gather of the sequence shards",
                  shard.to(gathered.scalar_type()), shards);
    // at::cat copies: the buffer is overwritten by the next forward.
    return Unpad(at::cat(shards, /*dim=*/1).to(shard.scalar_type()),
                 /*dim=*/1);
  });
}

}  // namespace ditserve::parallel
