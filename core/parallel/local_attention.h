#ifndef DITSERVE_CORE_PARALLEL_LOCAL_ATTENTION_H_
#define DITSERVE_CORE_PARALLEL_LOCAL_ATTENTION_H_

#include <ATen/core/Tensor.h>

#include <optional>

#include "core/models/layers/attention.h"

namespace ditserve::parallel {

// Attention when one rank holds the whole sequence.
class LocalAttention final : public models::Attention {
 public:
  at::Tensor Attend(const at::Tensor& q, const at::Tensor& k,
                    const at::Tensor& v,
                    const std::optional<at::Tensor>& key_mask) override;
};

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_LOCAL_ATTENTION_H_
