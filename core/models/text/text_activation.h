#ifndef DITSERVE_CORE_MODELS_TEXT_TEXT_ACTIVATION_H_
#define DITSERVE_CORE_MODELS_TEXT_TEXT_ACTIVATION_H_

#include <ATen/core/Tensor.h>

#include <string>

#include "absl/status/statusor.h"

namespace ditserve::models {

// The transformers ACT2FN entries the text encoders' configs name.
enum class TextActivation {
  kRelu,       // "relu"
  kGelu,       // "gelu": exact, erf based
  kGeluTanh,   // "gelu_new" / "gelu_pytorch_tanh": tanh approximation
  kQuickGelu,  // "quick_gelu": x * sigmoid(1.702 x)
};

// INVALID_ARGUMENT naming `source` and the name when it is not one of the
// above.
absl::StatusOr<TextActivation> ParseTextActivation(const std::string& name,
                                                   const std::string& source);

at::Tensor ApplyTextActivation(TextActivation activation, const at::Tensor& x);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_TEXT_TEXT_ACTIVATION_H_
