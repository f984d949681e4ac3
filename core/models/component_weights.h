#ifndef DITSERVE_CORE_MODELS_COMPONENT_WEIGHTS_H_
#define DITSERVE_CORE_MODELS_COMPONENT_WEIGHTS_H_

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <torch/nn/module.h>

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ditserve::models {

// Where a component's weights live; a parameter of every loader, never a
// constant (CPU float32 here, CUDA bf16/fp16 later).
struct Placement {
  c10::Device device = c10::Device(c10::kCPU);
  c10::ScalarType dtype = c10::kFloat;
};

// Moves `module` to `placement`, then loads the weights of the component
// folder `component_dir` (diffusers layout: a single or sharded
// diffusion_pytorch_model.safetensors) by name, strictly, restricted to the
// names `include` accepts (empty = all). Errors name the folder.
absl::Status LoadComponentWeights(
    torch::nn::Module& module, const std::string& component_dir,
    const Placement& placement,
    const std::function<bool(absl::string_view)>& include);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_COMPONENT_WEIGHTS_H_
