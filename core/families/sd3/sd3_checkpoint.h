#ifndef DITSERVE_CORE_FAMILIES_SD3_SD3_CHECKPOINT_H_
#define DITSERVE_CORE_FAMILIES_SD3_SD3_CHECKPOINT_H_

// Randomly initialised SD3-medium checkpoints in the diffusers folder layout,
// the fixture of the serving tests.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "core/checkpoints/component_writer.h"

namespace ditserve::checkpoints {

// Writes model_index.json (StableDiffusion3Pipeline), transformer/ (its
// position table the diffusers sincos table), vae/ (16 latent channels, SD3's
// scaling and shift), scheduler/ (flow-match Euler, static shift 3),
// tokenizer/ + text_encoder/ (CLIP-L with projection), tokenizer_2/ +
// text_encoder_2/ (CLIP-G with projection, padding with "!") and tokenizer_3/
// + text_encoder_3/ (T5) under `out_dir`. Weights as for WriteFluxCheckpoint:
// the same seed gives byte-identical files.
absl::Status WriteSD3Checkpoint(CheckpointPreset preset, uint64_t seed,
                                const std::string& out_dir);

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_FAMILIES_SD3_SD3_CHECKPOINT_H_
