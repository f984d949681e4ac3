#include "core/models/component_weights.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "core/io/safetensors.h"
#include "core/io/state_dict.h"

namespace ditserve::models {

absl::Status LoadComponentWeights(
    torch::nn::Module& module, const std::string& component_dir,
    const Placement& placement,
    const std::function<bool(absl::string_view)>& include) {
  try {
    module.to(placement.device, placement.dtype);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("moving ", component_dir, " to ",
                                            placement.device.str(), ": ",
                                            e.what()));
  }
  absl::StatusOr<std::unique_ptr<io::CheckpointTensors>> tensors =
      io::CheckpointTensors::Open(component_dir);
  if (!tensors.ok()) return tensors.status();
  io::LoadOptions options;
  options.include = include;
  absl::StatusOr<io::LoadReport> report =
      io::LoadStateDict(module, **tensors, options);
  return report.status();
}

}  // namespace ditserve::models
