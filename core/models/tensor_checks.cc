#include "core/models/tensor_checks.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ditserve::models {

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[",
                      absl::StrJoin(shape, ", ",
                                    [](std::string* out, int64_t size) {
                                      absl::StrAppend(out,
                                                      size == kAnySize
                                                          ? std::string("*")
                                                          : absl::StrCat(size));
                                    }),
                      "]");
}

absl::Status CheckShape(absl::string_view name, const at::Tensor& tensor,
                        const std::vector<int64_t>& expected) {
  if (!tensor.defined()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " is missing; expected shape ", ShapeString(expected)));
  }
  bool matches = tensor.dim() == static_cast<int64_t>(expected.size());
  for (int64_t i = 0; matches && i < tensor.dim(); ++i) {
    matches = expected[i] == kAnySize || expected[i] == tensor.size(i);
  }
  if (matches) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(name, " has shape ", ShapeString(tensor.sizes().vec()),
                   "; expected ", ShapeString(expected)));
}

absl::Status CheckPatchableLatents(absl::string_view name,
                                   const at::Tensor& latents, int64_t channels,
                                   int64_t patch_size) {
  absl::Status status =
      CheckShape(name, latents, {kAnySize, channels, kAnySize, kAnySize});
  if (!status.ok()) return status;
  const int64_t height = latents.size(2);
  const int64_t width = latents.size(3);
  if (height % patch_size == 0 && width % patch_size == 0) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      name, " is ", height, "x", width,
      "; height and width must be multiples of patch_size ", patch_size));
}

}  // namespace ditserve::models
