#include "core/parallel/usp_attention.h"

#include <memory>
#include <utility>

#include "core/parallel/ring_attention.h"

namespace ditserve::parallel {

UspAttention::UspAttention(Group ulysses, Group ring)
    : ulysses_(std::move(ulysses),
               std::make_unique<RingAttention>(std::move(ring))) {}

at::Tensor UspAttention::Attend(const at::Tensor& q, const at::Tensor& k,
                                const at::Tensor& v,
                                const std::optional<at::Tensor>& key_mask) {
  return ulysses_.Attend(q, k, v, key_mask);
}

}  // namespace ditserve::parallel
