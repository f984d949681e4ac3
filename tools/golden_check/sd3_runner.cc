// Golden cases of diffusers' SD3Transformer2DModel (SD3-medium and SD3.5),
// float32 on the CPU or --device.

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/families/sd3/sd3_transformer_2d_model.h"
#include "core/parallel/local_attention.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {
absl::StatusOr<std::vector<OutputComparison>> RunSD3TransformerCase(
    const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(
      io::TensorMap inputs,
      golden_case.ReadModelInputs("inputs_file", "inputs.safetensors"));
  models::SD3TransformerInputs forward_inputs;
  for (auto [name, target] :
       {std::pair{"hidden_states", &forward_inputs.hidden_states},
        std::pair{"encoder_hidden_states",
                  &forward_inputs.encoder_hidden_states},
        std::pair{"pooled_projections", &forward_inputs.pooled_projections},
        std::pair{"timestep", &forward_inputs.timestep}}) {
    ASSIGN_OR_RETURN(at::Tensor tensor,
                     RequireTensor(golden_case, inputs, name));
    *target = tensor;
  }
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::SD3Transformer2DModel> model,
      models::LoadSD3Transformer2DModel(
          golden_case.dir, std::make_shared<parallel::LocalAttention>(),
          golden_case.placement));
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(at::Tensor sample, model->Forward(forward_inputs));
  return CompareWithReferenceOutputs(golden_case, {{"sample", sample}});
}

}  // namespace ditserve::golden
