// Golden cases of diffusers' CogVideoXTransformer3DModel (2b with sincos
// positions, 5b and 1.5 with RoPE), float32 on the CPU or --device. The model
// computes its own RoPE tables from the latent grid; the case's tables (what
// the pipeline passes) are compared with them as outputs of their own.

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status_macros.h"
#include "core/families/cogvideox/cogvideox_transformer_3d_model.h"
#include "core/parallel/local_attention.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {
namespace {

// Both sides evaluate the same float32 angles, cos and sin; one rounding
// step of cos/sin near 1 is 6e-8, so 1e-6 only admits rounding.
constexpr Tolerance kRotaryTolerance{.atol = 1e-6, .rtol = 0.0};

}  // namespace

absl::StatusOr<std::vector<OutputComparison>> RunCogVideoXTransformerCase(
    const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(
      io::TensorMap inputs,
      golden_case.ReadModelInputs("inputs_file", "inputs.safetensors"));
  families::CogVideoXTransformerInputs forward_inputs;
  for (auto [name, target] :
       {std::pair{"hidden_states", &forward_inputs.hidden_states},
        std::pair{"encoder_hidden_states",
                  &forward_inputs.encoder_hidden_states},
        std::pair{"timestep", &forward_inputs.timestep}}) {
    ASSIGN_OR_RETURN(*target, RequireTensor(golden_case, inputs, name));
  }
  ASSIGN_OR_RETURN(
      std::shared_ptr<families::CogVideoXTransformer3DModel> model,
      families::LoadCogVideoXTransformer3DModel(
          golden_case.dir, std::make_shared<parallel::LocalAttention>(),
          golden_case.placement));
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(at::Tensor sample, model->Forward(forward_inputs));
  ASSIGN_OR_RETURN(
      std::vector<OutputComparison> comparisons,
      CompareWithReferenceOutputs(golden_case, {{"sample", sample}}));
  if (!model->config().use_rotary_positional_embeddings) return comparisons;
  const at::Tensor& latents = forward_inputs.hidden_states;
  ASSIGN_OR_RETURN(families::VideoTokenGrid grid,
                   families::TokenGridOf(model->config(), latents.size(1),
                                         latents.size(3), latents.size(4)));
  // The tables the forward kept, so the ones it used.
  ASSIGN_OR_RETURN(const families::VideoPositions positions,
                   model->PositionsOn(grid, latents.device()));
  const models::RotaryTables& rotary = *positions.rotary;
  for (auto [name, actual] : {std::pair{"image_rotary_emb_cos", rotary.cos},
                              std::pair{"image_rotary_emb_sin", rotary.sin}}) {
    ASSIGN_OR_RETURN(at::Tensor expected,
                     RequireTensor(golden_case, inputs, name));
    comparisons.push_back(
        CompareOutput(name, actual, expected, kRotaryTolerance));
  }
  return comparisons;
}

}  // namespace ditserve::golden
