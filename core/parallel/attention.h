#ifndef DITSERVE_CORE_PARALLEL_ATTENTION_H_
#define DITSERVE_CORE_PARALLEL_ATTENTION_H_

#include <ATen/core/Tensor.h>

#include <optional>

namespace ditserve::parallel {

// How a model attends over a sequence that may be split across ranks. Models
// hold one and call it for every attention layer; the implementation decides
// whether that is local math, an all-to-all over heads (Ulysses), a ring of
// K/V exchanges (Ring) or both, so the model code never changes.
//
// Header-only on purpose: models depend on this interface, implementations
// (which need models' attention math and dist's collectives) on models.
class Attention {
 public:
  virtual ~Attention() = default;

  // q, k, v: [B, H, S, D], the tokens this rank holds. key_mask: optional
  // bool [B, S_k] over the same keys, true = attend (padding is false).
  // Returns softmax(q k^T / sqrt(D)) v over the whole sequence for this
  // rank's queries, [B, H, S, D].
  virtual at::Tensor Attend(const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v,
                            const std::optional<at::Tensor>& key_mask) = 0;
};

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_ATTENTION_H_
