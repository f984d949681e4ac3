#include "core/models/text/text_encoder_weights.h"

#include <algorithm>
#include <exception>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/io/safetensors.h"
#include "core/io/state_dict.h"

namespace ditserve::models {

absl::Status LoadTextEncoderWeights(
    torch::nn::Module& module, const std::string& component_dir,
    const Placement& placement,
    const std::vector<std::string>& allow_unexpected,
    const std::vector<std::string>& keep_in_float32) {
  RETURN_IF_ERROR(base::Guarded(
      absl::StrCat("placing the text encoder of ", component_dir, " on ",
                   placement.device.str()),
      [&] {
        PlaceUnwritten(module, placement);
        if (placement.dtype != at::kHalf) return;
        for (const auto& item : module.named_modules()) {
          const std::string last = item.key().substr(item.key().rfind('.') + 1);
          if (std::find(keep_in_float32.begin(), keep_in_float32.end(), last) !=
              keep_in_float32.end()) {
            PlaceUnwritten(*item.value(), {placement.device, at::kFloat});
          }
        }
      }));
  ASSIGN_OR_RETURN(std::unique_ptr<io::CheckpointTensors> tensors,
                   io::CheckpointTensors::Open(component_dir));
  io::LoadOptions options;
  options.allow_unexpected = allow_unexpected;
  ASSIGN_OR_RETURN(io::LoadReport report,
                   io::LoadStateDict(module, *tensors, options));
  module.eval();
  return absl::OkStatus();
}

}  // namespace ditserve::models
