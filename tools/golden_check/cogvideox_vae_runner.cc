// Golden cases of diffusers' AutoencoderKLCogVideoX, float32 on the CPU or
// --device: decode(z).sample, decode(z_even).sample when the case has z_even,
// and the decoder's single pass over z (sample_single_pass; compared only where
// case.json lists it); where case.json has "enable_tiling", decode(z).sample
// in its tiles alone.

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "core/base/status_macros.h"
#include "core/families/cogvideox/cogvideox_vae_decoder.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {

absl::StatusOr<std::vector<OutputComparison>> RunCogVideoXVaeCase(
    const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(
      io::TensorMap inputs,
      golden_case.ReadModelInputs("inputs_file", "inputs.safetensors"));
  ASSIGN_OR_RETURN(at::Tensor z, RequireTensor(golden_case, inputs, "z"));
  ASSIGN_OR_RETURN(std::shared_ptr<families::AutoencoderKLCogVideoX> vae,
                   families::LoadAutoencoderKLCogVideoX(golden_case.ModelDir(),
                                                        golden_case.placement));
  io::TensorMap outputs;
  if (auto tiling = golden_case.spec.find("enable_tiling");
      tiling != golden_case.spec.end()) {
    const families::CogVideoXVaeConfig& config = vae->config();
    ASSIGN_OR_RETURN(
        models::DecodeTiles tiles,
        families::CogVideoXVaeTilesOfSize(
            config,
            tiling->value("tile_sample_min_height", config.sample_height / 2),
            tiling->value("tile_sample_min_width", config.sample_width / 2)));
    ASSIGN_OR_RETURN(outputs["sample"], vae->DecodeTiled(z, tiles));
    return CompareWithReferenceOutputs(golden_case, outputs);
  }
  ASSIGN_OR_RETURN(outputs["sample"], vae->Decode(z));
  ASSIGN_OR_RETURN(outputs["sample_single_pass"], vae->DecodeSinglePass(z));
  if (auto z_even = inputs.find("z_even"); z_even != inputs.end()) {
    ASSIGN_OR_RETURN(outputs["sample_even"], vae->Decode(z_even->second));
  }
  return CompareWithReferenceOutputs(golden_case, outputs);
}

}  // namespace ditserve::golden
