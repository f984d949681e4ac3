// Golden cases of diffusers' AutoencoderKLCogVideoX, float32 on the CPU or
// --device: decode(z).sample, decode(z_even).sample when the case has z_even,
// and the decoder's single pass over z (sample_single_pass; compared only where
// case.json lists it).

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
                   families::LoadAutoencoderKLCogVideoX(golden_case.dir,
                                                        golden_case.placement));
  io::TensorMap outputs;
  ASSIGN_OR_RETURN(outputs["sample"], vae->Decode(z));
  ASSIGN_OR_RETURN(outputs["sample_single_pass"], vae->DecodeSinglePass(z));
  if (auto z_even = inputs.find("z_even"); z_even != inputs.end()) {
    ASSIGN_OR_RETURN(outputs["sample_even"], vae->Decode(z_even->second));
  }
  return CompareWithReferenceOutputs(golden_case, outputs);
}

}  // namespace ditserve::golden
