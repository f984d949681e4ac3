#ifndef DITSERVE_CORE_FAMILIES_PIXART_PIXART_CHECKPOINT_H_
#define DITSERVE_CORE_FAMILIES_PIXART_PIXART_CHECKPOINT_H_

// Randomly initialised PixArt-α and PixArt-Σ checkpoints in the diffusers
// folder layout, the fixture of the serving tests.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "core/checkpoints/component_writer.h"
#include "core/config/model_defaults.h"

namespace ditserve::checkpoints {

// Writes model_index.json (PixArtAlphaPipeline or PixArtSigmaPipeline),
// transformer/ (learned sigma, sample_size 32: resolution binning uses the
// 256-pixel table; α with its micro-conditions), vae/ (4 latent channels, the
// SD VAE's scaling), scheduler/ (DPM-Solver++ as the released checkpoints),
// tokenizer/ and text_encoder/ (T5) under `out_dir`. Weights as for
// WriteFluxCheckpoint: the same seed gives byte-identical files.
// INVALID_ARGUMENT for a model other than pixart-alpha / pixart-sigma.
absl::Status WritePixArtCheckpoint(const config::ModelDefaults& model,
                                   CheckpointPreset preset, uint64_t seed,
                                   const std::string& out_dir);

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_FAMILIES_PIXART_PIXART_CHECKPOINT_H_
