#include "core/models/text/text_encoder_weights.h"

#include <exception>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/io/safetensors.h"
#include "core/io/state_dict.h"

namespace ditserve::models {

absl::Status LoadTextEncoderWeights(
    torch::nn::Module& module, const std::string& component_dir,
    const Placement& placement,
    const std::vector<std::string>& allow_unexpected) {
  try {
    module.to(placement.device, placement.dtype);
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("moving the text encoder of ", component_dir, " to ",
                     placement.device.str(), ": ", e.what()));
  }
  absl::StatusOr<std::unique_ptr<io::CheckpointTensors>> tensors =
      io::CheckpointTensors::Open(component_dir);
  if (!tensors.ok()) return tensors.status();
  io::LoadOptions options;
  options.allow_unexpected = allow_unexpected;
  absl::StatusOr<io::LoadReport> report =
      io::LoadStateDict(module, **tensors, options);
  if (!report.ok()) return report.status();
  module.eval();
  return absl::OkStatus();
}

}  // namespace ditserve::models
