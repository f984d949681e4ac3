// Golden cases of diffusers' AutoencoderKL: decode(z).sample, float32 on the
// CPU or --device; after enable_tiling() where case.json has "enable_tiling".

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "core/base/status_macros.h"
#include "core/models/vae/autoencoder_kl.h"
#include "tools/golden_check/runners.h"

namespace ditserve::golden {

absl::StatusOr<std::vector<OutputComparison>> RunAutoencoderKLCase(
    const GoldenCase& golden_case) {
  ASSIGN_OR_RETURN(
      io::TensorMap inputs,
      golden_case.ReadModelInputs("inputs_file", "inputs.safetensors"));
  ASSIGN_OR_RETURN(at::Tensor z, RequireTensor(golden_case, inputs, "z"));
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::AutoencoderKL> vae,
      models::LoadAutoencoderKL(golden_case.ModelDir(), golden_case.placement));
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(at::Tensor sample, golden_case.spec.contains("enable_tiling")
                                          ? vae->DecodeTiled(z)
                                          : vae->Decode(z));
  return CompareWithReferenceOutputs(golden_case, {{"sample", sample}});
}

}  // namespace ditserve::golden
