#include "tools/make_checkpoint/diffusers_checkpoint.h"

#include <torch/torch.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "core/models/vae/autoencoder_kl.h"

namespace ditserve::tools {

absl::Status WriteDiffusersCheckpoint(const DiffusersCheckpoint& checkpoint,
                                      CheckpointPreset preset, uint64_t seed,
                                      const std::string& out_dir) {
  const std::filesystem::path root(out_dir);
  try {
    torch::manual_seed(seed);
    absl::StatusOr<io::TensorMap> weights = checkpoint.transformer_weights();
    if (!weights.ok()) return weights.status();
    if (absl::Status status = WriteDiffusersComponent(
            root / "transformer", checkpoint.transformer_config, *weights);
        !status.ok()) {
      return status;
    }
    // Drawn after the transformer's from the same generator; the module
    // holds the decoding half only.
    models::AutoencoderKL vae(checkpoint.vae);
    if (absl::Status status = WriteDiffusersComponent(
            root / "vae", models::ToJson(checkpoint.vae),
            PerturbedWeights(vae));
        !status.ok()) {
      return status;
    }
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("initialising weights for ", out_dir, ": ", e.what()));
  }
  if (absl::Status status = WriteSchedulerConfig(root, checkpoint.scheduler);
      !status.ok()) {
    return status;
  }
  if (absl::Status status = WriteModelIndex(root, checkpoint.pipeline_class,
                                            checkpoint.components);
      !status.ok()) {
    return status;
  }
  return WriteTextComponents(preset, seed, checkpoint.text_encoders, out_dir);
}

}  // namespace ditserve::tools
