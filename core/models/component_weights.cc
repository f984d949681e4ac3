#include "core/models/component_weights.h"

#include <torch/torch.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/io/safetensors.h"
#include "core/io/state_dict.h"

namespace ditserve::models {

void PlaceUnwritten(torch::nn::Module& module, const Placement& placement) {
  torch::NoGradGuard no_grad;
  const at::TensorOptions options =
      at::TensorOptions().device(placement.device).dtype(placement.dtype);
  for (auto& item : module.named_parameters()) {
    item.value().set_data(at::empty(item.value().sizes(), options));
  }
  for (auto& item : module.named_buffers()) {
    item.value().set_data(at::empty(item.value().sizes(), options));
  }
}

absl::Status LoadComponentWeights(
    torch::nn::Module& module, const std::string& component_dir,
    const Placement& placement,
    const std::function<bool(absl::string_view)>& include) {
  RETURN_IF_ERROR(base::Guarded(
      absl::StrCat("placing ", component_dir, " on ", placement.device.str()),
      [&] { PlaceUnwritten(module, placement); }));
  ASSIGN_OR_RETURN(std::unique_ptr<io::CheckpointTensors> tensors,
                   io::CheckpointTensors::Open(component_dir));
  io::LoadOptions options;
  options.include = include;
  absl::StatusOr<io::LoadReport> report =
      io::LoadStateDict(module, *tensors, options);
  return report.status();
}

}  // namespace ditserve::models
