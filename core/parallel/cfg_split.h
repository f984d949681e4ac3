#ifndef DITSERVE_CORE_PARALLEL_CFG_SPLIT_H_
#define DITSERVE_CORE_PARALLEL_CFG_SPLIT_H_

#include <ATen/core/Tensor.h>

#include <functional>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ditserve::parallel {

// The branches of a classifier-free-guidance batch, in batch order.
inline constexpr int kNegativeBranch = 0;
inline constexpr int kPositiveBranch = 1;

// Classifier-free guidance with its two branches on two ranks (xDiT's CFG
// parallel): each rank runs the transformer on its branch only, and the ranks
// exchange their outputs every step, so both combine the same guided noise
// prediction and keep identical latents.
struct CfgSplit {
  // The branch this rank runs: kNegativeBranch (unconditional) or
  // kPositiveBranch (conditional).
  int branch = kNegativeBranch;
  // Takes this rank's transformer output [B, ...] and returns both branches'
  // outputs [2B, ...], negative rows first, the same on both ranks.
  std::function<absl::StatusOr<at::Tensor>(const at::Tensor& own)> exchange;
};

// INVALID_ARGUMENT when `split` is set without guidance (guidance_scale <= 1),
// names an unknown branch or has no exchange.
absl::Status CheckCfgSplit(const std::optional<CfgSplit>& split,
                           float guidance_scale);

// split.exchange(own), checked to be [2B, ...] for `own` [B, ...]: the
// batch [negative, positive] that single-rank guidance runs the transformer
// on.
absl::StatusOr<at::Tensor> ExchangeBranches(const CfgSplit& split,
                                            const at::Tensor& own);

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_CFG_SPLIT_H_
