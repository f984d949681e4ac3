#ifndef DITSERVE_CORE_MODELS_TEXT_TEXT_ENCODER_WEIGHTS_H_
#define DITSERVE_CORE_MODELS_TEXT_TEXT_ENCODER_WEIGHTS_H_

#include <torch/nn/module.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/models/component_weights.h"

namespace ditserve::models {

// Moves `module` to `placement`, loads the weights of a transformers folder
// (model.safetensors or model.safetensors.index.json) strictly by name, and
// switches the module to eval mode. `allow_unexpected` lists checkpoint names
// that may exist without a module counterpart (tied or non-persistent
// tensors older transformers versions saved). Submodules named one of
// `keep_in_float32` stay float32 in a float16 placement, loaded from the
// checkpoint without rounding; in bfloat16 they take the placement's dtype.
// That is transformers' _keep_in_fp32_modules, which guards float16's
// narrow range and is not applied to bfloat16. Errors name the folder.
absl::Status LoadTextEncoderWeights(
    torch::nn::Module& module, const std::string& component_dir,
    const Placement& placement,
    const std::vector<std::string>& allow_unexpected,
    const std::vector<std::string>& keep_in_float32 = {});

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_TEXT_TEXT_ENCODER_WEIGHTS_H_
