#ifndef DITSERVE_CORE_PARALLEL_RING_ATTENTION_H_
#define DITSERVE_CORE_PARALLEL_RING_ATTENTION_H_

#include <ATen/core/Tensor.h>

#include <optional>

#include "core/models/layers/attention.h"
#include "core/parallel/group_collectives.h"

namespace ditserve::parallel {

// Sequence parallelism over a ring: every rank holds one contiguous block of
// the sequence (block i on ring rank i). In ring-size steps each rank attends
// its queries over the K/V (and key-mask) block it holds, while passing that
// block to the next rank and receiving the previous rank's; the partial
// outputs are merged with their log-sum-exp (AttentionAccumulator).
//
// Attend throws base::StatusError (a std::runtime_error carrying the Status,
// see core/base/status_error.h) when a transfer fails or exceeds the ring
// group's timeout, and when the ranks' blocks disagree in shape.
class RingAttention final : public models::Attention {
 public:
  explicit RingAttention(Group ring);

  // q, k, v: [B, H, S_block, D] this rank's block; key_mask: optional bool
  // [B, S_block] (false for padding). Every ring rank passes the same shapes
  // and either all pass a key mask or none does.
  at::Tensor Attend(const at::Tensor& q, const at::Tensor& k,
                    const at::Tensor& v,
                    const std::optional<at::Tensor>& key_mask) override;

 private:
  Group ring_;
};

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_RING_ATTENTION_H_
