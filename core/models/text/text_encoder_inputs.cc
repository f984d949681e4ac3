#include "core/models/text/text_encoder_inputs.h"

#include <torch/torch.h>

#include <limits>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/models/tensor_checks.h"

namespace ditserve::models {

absl::Status CheckTextEncoderInputs(
    const at::Tensor& input_ids,
    const std::optional<at::Tensor>& attention_mask, int64_t vocab_size) {
  RETURN_IF_ERROR(CheckShape("input_ids", input_ids, {kAnySize, kAnySize}));
  if (!at::isIntegralType(input_ids.scalar_type(), /*includeBool=*/false) ||
      input_ids.numel() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("input_ids must be a non-empty integer tensor; got ",
                     c10::toString(input_ids.scalar_type()), " with shape ",
                     ShapeString(input_ids.sizes().vec())));
  }
  const int64_t lowest = input_ids.min().item<int64_t>();
  const int64_t highest = input_ids.max().item<int64_t>();
  if (lowest < 0 || highest >= vocab_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("input_ids hold ids in [", lowest, ", ", highest,
                     "]; the vocabulary has ids [0, ", vocab_size - 1, "]"));
  }
  if (!attention_mask.has_value()) return absl::OkStatus();
  RETURN_IF_ERROR(
      CheckShape("attention_mask", *attention_mask, input_ids.sizes().vec()));
  if (!at::isIntegralType(attention_mask->scalar_type(),
                          /*includeBool=*/true)) {
    return absl::InvalidArgumentError(
        absl::StrCat("attention_mask must be an integer or bool tensor; got ",
                     c10::toString(attention_mask->scalar_type())));
  }
  return absl::OkStatus();
}

double LowestFinite(c10::ScalarType dtype) {
  switch (dtype) {
    case at::kDouble:
      return std::numeric_limits<double>::lowest();
    case at::kHalf:
      return std::numeric_limits<c10::Half>::lowest();
    case at::kBFloat16:
      return std::numeric_limits<c10::BFloat16>::lowest();
    default:
      return std::numeric_limits<float>::lowest();
  }
}

at::Tensor AdditiveKeyMask(const at::Tensor& attention_mask,
                           c10::ScalarType dtype, c10::Device device) {
  const at::Tensor keep =
      attention_mask.to(device, dtype).unsqueeze(1).unsqueeze(1);
  return (1.0 - keep) * LowestFinite(dtype);
}

}  // namespace ditserve::models
