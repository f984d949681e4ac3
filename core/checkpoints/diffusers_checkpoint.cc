#include "core/checkpoints/diffusers_checkpoint.h"

#include <torch/torch.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/models/layers/parameter_init.h"
#include "core/models/vae/autoencoder_kl.h"

namespace ditserve::checkpoints {

VaeComponent AutoencoderKLComponent(const models::AutoencoderKLConfig& config) {
  return {.config = models::ToJson(config),
          .weights = [config]() -> absl::StatusOr<io::TensorMap> {
            // The module holds the decoding half only.
            models::AutoencoderKL vae(config);
            return PerturbedWeights(vae);
          }};
}

absl::Status WriteDiffusersCheckpoint(const DiffusersCheckpoint& checkpoint,
                                      CheckpointPreset preset, uint64_t seed,
                                      const std::string& out_dir) {
  const std::filesystem::path root(out_dir);
  RETURN_IF_ERROR(base::Guarded(
      absl::StrCat("initialising weights for ", out_dir),
      [&]() -> absl::Status {
        torch::manual_seed(seed);
        const models::RandomParameters drawn_as_torch_does;
        ASSIGN_OR_RETURN(io::TensorMap weights,
                         checkpoint.transformer_weights());
        RETURN_IF_ERROR(WriteDiffusersComponent(
            root / "transformer", checkpoint.transformer_config, weights));
        ASSIGN_OR_RETURN(io::TensorMap vae_weights, checkpoint.vae.weights());
        return WriteDiffusersComponent(root / "vae", checkpoint.vae.config,
                                       vae_weights);
      }));
  RETURN_IF_ERROR(WriteSchedulerConfig(root, checkpoint.scheduler));
  RETURN_IF_ERROR(
      WriteModelIndex(root, checkpoint.pipeline_class, checkpoint.components));
  return WriteTextComponents(preset, seed, checkpoint.text_encoders, out_dir);
}

}  // namespace ditserve::checkpoints
