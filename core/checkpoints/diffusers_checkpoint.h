#ifndef DITSERVE_CORE_CHECKPOINTS_DIFFUSERS_CHECKPOINT_H_
#define DITSERVE_CORE_CHECKPOINTS_DIFFUSERS_CHECKPOINT_H_

// The folder every family's random checkpoint is written as: a transformer,
// a VAE, a scheduler, text encoders and the model index listing them.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/checkpoints/component_writer.h"
#include "core/checkpoints/text_components.h"
#include "core/io/safetensors.h"
#include "core/models/vae/autoencoder_kl_config.h"
#include "nlohmann/json.hpp"

namespace ditserve::checkpoints {

// vae/config.json and the builder of the VAE's weights (its decoding half).
struct VaeComponent {
  nlohmann::json config;
  std::function<absl::StatusOr<io::TensorMap>()> weights;
};

// The AutoencoderKL of `config` (FLUX, PixArt, SD3).
VaeComponent AutoencoderKLComponent(const models::AutoencoderKLConfig& config);

// What sets one family's checkpoint apart.
struct DiffusersCheckpoint {
  // model_index.json's _class_name, e.g. "PixArtSigmaPipeline".
  std::string pipeline_class;
  // transformer/config.json.
  nlohmann::json transformer_config;
  // Builds the transformer of transformer_config and returns the weights to
  // write (PerturbedWeights, plus any persistent buffer); called with torch's
  // generator freshly seeded.
  std::function<absl::StatusOr<io::TensorMap>()> transformer_weights;
  // Its weights are drawn after the transformer's from the same generator.
  VaeComponent vae;
  // scheduler/scheduler_config.json.
  nlohmann::json scheduler;
  // model_index.json's entries besides the text components, name →
  // [library, class].
  nlohmann::json components;
  std::vector<TextEncoderSlot> text_encoders;
};

// Writes `checkpoint` under `out_dir` (created if needed): the transformer's
// and then the VAE's weights drawn after torch::manual_seed(seed), the
// scheduler, the model index, then WriteTextComponents. The same seed gives
// byte-identical files; LibTorch errors become INTERNAL naming `out_dir`.
absl::Status WriteDiffusersCheckpoint(const DiffusersCheckpoint& checkpoint,
                                      CheckpointPreset preset, uint64_t seed,
                                      const std::string& out_dir);

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_CHECKPOINTS_DIFFUSERS_CHECKPOINT_H_
