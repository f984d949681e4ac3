#ifndef DITSERVE_CORE_MODELS_COMPONENT_WEIGHTS_H_
#define DITSERVE_CORE_MODELS_COMPONENT_WEIGHTS_H_

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <torch/nn/module.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"

namespace ditserve::models {

// Where a component's weights live; a parameter of every loader, never a
// constant (CPU float32 here, CUDA bf16/fp16 later).
struct Placement {
  c10::Device device = c10::Device(c10::kCPU);
  c10::ScalarType dtype = c10::kFloat;
};

// Gives every parameter and buffer of `module` new storage at `placement`,
// unwritten, for a strict load to fill: moving what they held (nothing, see
// layers/parameter_init.h) would only be a pass over a float32-sized model,
// and on a GPU its transfer.
void PlaceUnwritten(torch::nn::Module& module, const Placement& placement);

// Places `module` (PlaceUnwritten), then loads the weights of the component
// folder `component_dir` (diffusers layout: a single or sharded
// diffusion_pytorch_model.safetensors) by name, strictly, restricted to the
// names `include` accepts (empty = all). Errors name the folder.
absl::Status LoadComponentWeights(
    torch::nn::Module& module, const std::string& component_dir,
    const Placement& placement,
    const std::function<bool(absl::string_view)>& include);

// `model` (a module with HoldsTensor(name): the blocks it was built with)
// with those of the component folder's weights loaded strictly, in eval
// mode.
template <typename Model>
absl::StatusOr<std::shared_ptr<Model>> LoadHeldWeights(
    std::shared_ptr<Model> model, const std::string& component_dir,
    const Placement& placement) {
  const absl::Status loaded = LoadComponentWeights(
      *model, component_dir, placement,
      [&model](absl::string_view name) { return model->HoldsTensor(name); });
  if (!loaded.ok()) return loaded;
  model->eval();
  return model;
}

// A `Model(args...)` (INVALID_ARGUMENT for arguments it rejects with
// std::invalid_argument) with the weights of the component folder it holds:
// LoadHeldWeights.
template <typename Model, typename... Args>
absl::StatusOr<std::shared_ptr<Model>> BuildAndLoad(
    absl::string_view model_name, const std::string& component_dir,
    const Placement& placement, Args&&... args) {
  std::shared_ptr<Model> model;
  RETURN_IF_ERROR(base::GuardedAs(
      absl::StatusCode::kInternal,
      absl::StrCat("building ", model_name, " from ", component_dir),
      [&] { model = std::make_shared<Model>(std::forward<Args>(args)...); }));
  return LoadHeldWeights(std::move(model), component_dir, placement);
}

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_COMPONENT_WEIGHTS_H_
