// Golden cases of diffusers' FluxTransformer2DModel (with and without the
// guidance embedding): one forward on the case's inputs, float32 on the CPU or
// --device.

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/families/flux/flux_transformer_loader.h"
#include "core/parallel/local_attention.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {

absl::StatusOr<std::vector<OutputComparison>> RunFluxTransformerCase(
    const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(
      io::TensorMap inputs,
      golden_case.ReadModelInputs("inputs_file", "inputs.safetensors"));
  models::FluxTransformerInputs forward_inputs;
  for (auto [name, target] :
       {std::pair{"hidden_states", &forward_inputs.hidden_states},
        std::pair{"encoder_hidden_states",
                  &forward_inputs.encoder_hidden_states},
        std::pair{"pooled_projections", &forward_inputs.pooled_projections},
        std::pair{"timestep", &forward_inputs.timestep},
        std::pair{"img_ids", &forward_inputs.img_ids},
        std::pair{"txt_ids", &forward_inputs.txt_ids}}) {
    auto it = inputs.find(name);
    if (it == inputs.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          golden_case.dir, ": the inputs file has no \"", name, "\""));
    }
    *target = it->second;
  }
  if (auto it = inputs.find("guidance"); it != inputs.end()) {
    forward_inputs.guidance = it->second;
  }
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::FluxTransformer2DModel> model,
      models::LoadFluxTransformer2DModel(
          golden_case.dir, std::make_shared<parallel::LocalAttention>(),
          golden_case.placement));
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(at::Tensor sample, model->Forward(forward_inputs));
  return CompareWithReferenceOutputs(golden_case, {{"sample", sample}});
}

}  // namespace ditserve::golden
