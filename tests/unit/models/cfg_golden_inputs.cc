#include "tests/unit/models/cfg_golden_inputs.h"

namespace ditserve::testing {

models::SD3TransformerInputs SD3GoldenInputs(const GoldenCase& golden) {
  models::SD3TransformerInputs inputs;
  inputs.hidden_states = golden.Input("hidden_states");
  inputs.encoder_hidden_states = golden.Input("encoder_hidden_states");
  inputs.pooled_projections = golden.Input("pooled_projections");
  inputs.timestep = golden.Input("timestep");
  return inputs;
}

models::PixArtTransformerInputs PixArtGoldenInputs(const GoldenCase& golden) {
  models::PixArtTransformerInputs inputs;
  inputs.hidden_states = golden.Input("hidden_states");
  inputs.encoder_hidden_states = golden.Input("encoder_hidden_states");
  inputs.timestep = golden.Input("timestep");
  inputs.encoder_attention_mask = golden.Input("encoder_attention_mask");
  return inputs;
}

models::PixArtMicroConditions PixArtGoldenMicroConditions(
    const GoldenCase& golden) {
  return {golden.Input("resolution"), golden.Input("aspect_ratio")};
}

}  // namespace ditserve::testing
