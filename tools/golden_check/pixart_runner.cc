// Golden cases of diffusers' PixArtTransformer2DModel (α with its
// micro-conditions, Σ without), float32 on the CPU or --device.

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/families/pixart/pixart_transformer_2d_model.h"
#include "core/parallel/local_attention.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {
absl::StatusOr<std::vector<OutputComparison>> RunPixArtTransformerCase(
    const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(
      io::TensorMap inputs,
      golden_case.ReadModelInputs("inputs_file", "inputs.safetensors"));
  models::PixArtTransformerInputs forward_inputs;
  for (auto [name, target] :
       {std::pair{"hidden_states", &forward_inputs.hidden_states},
        std::pair{"encoder_hidden_states",
                  &forward_inputs.encoder_hidden_states},
        std::pair{"timestep", &forward_inputs.timestep}}) {
    ASSIGN_OR_RETURN(at::Tensor tensor,
                     RequireTensor(golden_case, inputs, name));
    *target = tensor;
  }
  if (auto it = inputs.find("encoder_attention_mask"); it != inputs.end()) {
    forward_inputs.encoder_attention_mask = it->second;
  }
  auto resolution = inputs.find("resolution");
  auto aspect_ratio = inputs.find("aspect_ratio");
  if (resolution != inputs.end() && aspect_ratio != inputs.end()) {
    forward_inputs.micro_conditions =
        models::PixArtMicroConditions{resolution->second, aspect_ratio->second};
  }
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::PixArtTransformer2DModel> model,
      models::LoadPixArtTransformer2DModel(
          golden_case.dir, std::make_shared<parallel::LocalAttention>(),
          golden_case.placement));
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(at::Tensor sample, model->Forward(forward_inputs));
  return CompareWithReferenceOutputs(golden_case, {{"sample", sample}});
}

}  // namespace ditserve::golden
