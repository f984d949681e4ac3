#include "tests/unit/families/flux/flux_golden_inputs.h"

#include <torch/torch.h>

#include <memory>

#include "core/families/flux/flux_transformer_loader.h"
#include "core/parallel/local_attention.h"

namespace ditserve::testing {

models::FluxTransformerInputs FluxGoldenInputs(const GoldenCase& golden,
                                               bool guidance) {
  models::FluxTransformerInputs inputs;
  inputs.hidden_states = golden.Input("hidden_states");
  inputs.encoder_hidden_states = golden.Input("encoder_hidden_states");
  inputs.pooled_projections = golden.Input("pooled_projections");
  inputs.timestep = golden.Input("timestep");
  inputs.img_ids = golden.Input("img_ids");
  inputs.txt_ids = golden.Input("txt_ids");
  if (guidance) inputs.guidance = golden.Input("guidance");
  return inputs;
}

absl::StatusOr<at::Tensor> SingleRankFluxForward(
    const GoldenCase& golden, const models::FluxTransformerInputs& inputs) {
  absl::StatusOr<std::shared_ptr<models::FluxTransformer2DModel>> model =
      models::LoadFluxTransformer2DModel(
          golden.dir(), std::make_shared<parallel::LocalAttention>(),
          models::Placement{});
  if (!model.ok()) return model.status();
  torch::NoGradGuard no_grad;
  return (*model)->Forward(inputs);
}

}  // namespace ditserve::testing
