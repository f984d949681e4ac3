#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_CHECKPOINT_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_CHECKPOINT_H_

// Randomly initialised CogVideoX-2b, -5b and 1.5-5B checkpoints in the
// diffusers folder layout, the fixture of the serving tests.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "core/checkpoints/component_writer.h"
#include "core/config/model_defaults.h"

namespace ditserve::checkpoints {

// Writes model_index.json (CogVideoXPipeline), transformer/ (the released
// model's kind: 2b a sincos table, 5b RoPE, 1.5 RoPE with patch_size_t 2 and
// a Linear patch embedding; its trained sample size and T5 length 226),
// vae/ (AutoencoderKLCogVideoX, 16 latent channels, temporal compression 4),
// scheduler/ (CogVideoXDDIMScheduler with the released folders' settings),
// tokenizer/ and text_encoder/ (T5) under `out_dir`, with the preset's
// widths. The same seed gives byte-identical files. INVALID_ARGUMENT for a
// model other than cogvideox-2b, cogvideox-5b and cogvideox1.5-5b.
absl::Status WriteCogVideoXCheckpoint(const config::ModelDefaults& model,
                                      CheckpointPreset preset, uint64_t seed,
                                      const std::string& out_dir);

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_CHECKPOINT_H_
