#include "core/parallel/cfg_split.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/models/tensor_checks.h"

namespace ditserve::parallel {

absl::Status CheckCfgSplit(const std::optional<CfgSplit>& split,
                           float guidance_scale) {
  if (!split.has_value()) return absl::OkStatus();
  if (guidance_scale <= 1.0F) {
    return absl::InvalidArgumentError(
        absl::StrCat("cfg_split needs classifier-free guidance, but "
                     "guidance_scale ",
                     guidance_scale, " is not above 1"));
  }
  if (split->branch != kNegativeBranch && split->branch != kPositiveBranch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cfg_split.branch ", split->branch, " is not ", kNegativeBranch,
        " (negative) or ", kPositiveBranch, " (positive)"));
  }
  if (!split->exchange) {
    return absl::InvalidArgumentError("cfg_split.exchange is empty");
  }
  return absl::OkStatus();
}

absl::StatusOr<at::Tensor> ExchangeBranches(const CfgSplit& split,
                                            const at::Tensor& own) {
  ASSIGN_OR_RETURN(at::Tensor both, split.exchange(own));
  std::vector<int64_t> expected(own.sizes().begin(), own.sizes().end());
  expected[0] *= 2;
  RETURN_IF_ERROR(
      models::CheckShape("exchanged guidance branches", both, expected));
  return both;
}

}  // namespace ditserve::parallel
