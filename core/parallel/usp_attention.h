#ifndef DITSERVE_CORE_PARALLEL_USP_ATTENTION_H_
#define DITSERVE_CORE_PARALLEL_USP_ATTENTION_H_

#include <ATen/core/Tensor.h>

#include <optional>

#include "core/models/layers/attention.h"
#include "core/parallel/group_collectives.h"
#include "core/parallel/ulysses_attention.h"

namespace ditserve::parallel {

// Unified sequence parallelism: Ulysses inside, Ring across. The sequence is
// split into ring × ulysses blocks, block ring_index * ulysses +
// ulysses_index on that rank (the mesh's sp order). The Ulysses all-to-all
// gathers the ring rank's span of ulysses consecutive blocks for H / ulysses
// heads, and ring attention runs over those spans across the ring group,
// whose members hold the same heads.
//
// Attend throws base::StatusError as UlyssesAttention and RingAttention do.
class UspAttention final : public models::Attention {
 public:
  UspAttention(Group ulysses, Group ring);

  // q, k, v: [B, H, S_block, D] this rank's block; key_mask: optional bool
  // [B, S_block] (false for padding).
  at::Tensor Attend(const at::Tensor& q, const at::Tensor& k,
                    const at::Tensor& v,
                    const std::optional<at::Tensor>& key_mask) override;

 private:
  UlyssesAttention ulysses_;
};

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_USP_ATTENTION_H_
