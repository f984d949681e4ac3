#ifndef DITSERVE_CORE_FAMILIES_FLUX_FLUX_CHECKPOINT_H_
#define DITSERVE_CORE_FAMILIES_FLUX_FLUX_CHECKPOINT_H_

// Randomly initialised FLUX checkpoints in the diffusers folder layout: the
// demo's built-in model and the fixture of tests and benchmarks.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/checkpoints/component_writer.h"
#include "core/config/model_defaults.h"
#include "core/families/flux/flux_transformer_config.h"
#include "core/models/vae/autoencoder_kl_config.h"
#include "core/schedulers/flow_match_euler.h"

namespace ditserve::checkpoints {

struct FluxCheckpointConfigs {
  models::FluxTransformerConfig transformer;
  models::AutoencoderKLConfig vae;
  schedulers::FlowMatchEulerConfig scheduler;
};

// The component configs of a preset. The model's defaults row decides the
// guidance embedding and the scheduler shift; INVALID_ARGUMENT for a row other
// than flux-dev's or flux-schnell's.
absl::StatusOr<FluxCheckpointConfigs> FluxPresetConfigs(
    const config::ModelDefaults& defaults, CheckpointPreset preset);

// Writes model_index.json, transformer/, vae/ and scheduler/ under `out_dir`
// (created if needed). Weights are the modules' initialisation under
// torch::manual_seed(seed) plus 0.02 N(0, 1) noise on every parameter, so no
// norm or modulation weight is trivially 0 or 1; the same seed gives
// byte-identical files. The VAE holds its decoding half only.
absl::Status WriteFluxCheckpoint(const config::ModelDefaults& model,
                                 CheckpointPreset preset, uint64_t seed,
                                 const std::string& out_dir);

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_FAMILIES_FLUX_FLUX_CHECKPOINT_H_
