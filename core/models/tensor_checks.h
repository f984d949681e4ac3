#ifndef DITSERVE_CORE_MODELS_TENSOR_CHECKS_H_
#define DITSERVE_CORE_MODELS_TENSOR_CHECKS_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ditserve::models {

// Wildcard for CheckShape: any size is accepted in this dimension.
inline constexpr int64_t kAnySize = -1;

// OK when `tensor` is defined and has expected.size() dims, each equal to the
// expected size or kAnySize; otherwise INVALID_ARGUMENT such as
// "hidden_states has shape [2, 16, 32]; expected [*, *, 64]".
absl::Status CheckShape(absl::string_view name, const at::Tensor& tensor,
                        const std::vector<int64_t>& expected);

// OK when `latents` is [*, channels, H, W] with H and W multiples of
// patch_size, as a patch-embedding transformer takes them; otherwise
// INVALID_ARGUMENT such as "hidden_states is 9x8; height and width must be
// multiples of patch_size 2".
absl::Status CheckPatchableLatents(absl::string_view name,
                                   const at::Tensor& latents, int64_t channels,
                                   int64_t patch_size);

// "[2, 16, 32]"; kAnySize prints as "*".
std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_TENSOR_CHECKS_H_
