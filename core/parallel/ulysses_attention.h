#ifndef DITSERVE_CORE_PARALLEL_ULYSSES_ATTENTION_H_
#define DITSERVE_CORE_PARALLEL_ULYSSES_ATTENTION_H_

#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>

#include "core/models/layers/attention.h"
#include "core/parallel/group_collectives.h"

namespace ditserve::parallel {

// DeepSpeed-Ulysses sequence parallelism: every rank holds one contiguous
// block of the sequence for all heads (block i on Ulysses rank i). One
// all-to-all turns that into the whole Ulysses span of the sequence for
// H / ulysses heads, `inner` attends over it, and a second all-to-all returns
// the output to sequence blocks. The key mask is all-gathered.
//
// Attend throws base::StatusError (a std::runtime_error carrying the Status,
// see core/base/status_error.h): INVALID_ARGUMENT when the heads do not divide
// by the group size or q, k, v differ in shape, else the failed collective's
// code naming the operation and the group.
class UlyssesAttention final : public models::Attention {
 public:
  // `inner` attends over the gathered span: LocalAttention for Ulysses alone,
  // RingAttention across the ring for USP, StaleKvAttention on a PipeFusion
  // stage.
  UlyssesAttention(Group ulysses, std::shared_ptr<models::Attention> inner);

  // q, k, v: [B, H, S_block, D] this rank's block; key_mask: optional bool
  // [B, S_block] (false for padding). Every Ulysses rank passes the same
  // shapes and either all pass a key mask or none does.
  at::Tensor Attend(const at::Tensor& q, const at::Tensor& k,
                    const at::Tensor& v,
                    const std::optional<at::Tensor>& key_mask) override;

 private:
  Group ulysses_;
  std::shared_ptr<models::Attention> inner_;
};

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_ULYSSES_ATTENTION_H_
