#include "tests/unit/models/flux/flux_golden_inputs.h"

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

}  // namespace ditserve::testing
