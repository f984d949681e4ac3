#include "core/models/text/text_activation.h"

#include <torch/torch.h>

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::models {
namespace {

constexpr double kPi = 3.14159265358979323846;

}  // namespace

absl::StatusOr<TextActivation> ParseTextActivation(const std::string& name,
                                                   const std::string& source) {
  if (name == "relu") return TextActivation::kRelu;
  if (name == "gelu") return TextActivation::kGelu;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") {
    return TextActivation::kGeluTanh;
  }
  if (name == "quick_gelu") return TextActivation::kQuickGelu;
  return absl::InvalidArgumentError(absl::StrCat(
      source, ": activation \"", name,
      "\" is not supported; expected relu, gelu, gelu_new, gelu_pytorch_tanh "
      "or quick_gelu"));
}

at::Tensor ApplyTextActivation(TextActivation activation, const at::Tensor& x) {
  switch (activation) {
    case TextActivation::kRelu:
      return at::relu(x);
    case TextActivation::kGelu:
      return at::gelu(x);
    case TextActivation::kGeluTanh:
      // transformers' NewGELUActivation, term by term.
      return 0.5 * x *
             (1.0 + at::tanh(std::sqrt(2.0 / kPi) *
                             (x + 0.044715 * at::pow(x, 3.0))));
    case TextActivation::kQuickGelu:
      return x * at::sigmoid(1.702 * x);
  }
  return x;
}

}  // namespace ditserve::models
