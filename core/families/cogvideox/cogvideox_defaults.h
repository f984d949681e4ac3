#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DEFAULTS_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DEFAULTS_H_

#include "absl/strings/string_view.h"
#include "core/config/model_defaults.h"

namespace ditserve::families {
namespace cogvideox_internal {

// What CogVideoXPipeline gives every release: 50 steps, guidance 6 with
// dynamic CFG available, T5 at 226 tokens in front of the video tokens, the
// folders' CogVideoXDDIMScheduler; frames are frame_step × N + 1.
constexpr config::ModelDefaults Release(absl::string_view name, int height,
                                        int width, int num_frames,
                                        int frame_step, int fps) {
  config::ModelDefaults row;
  row.name = name;
  row.height = height;
  row.width = width;
  row.num_inference_steps = 50;
  row.guidance_scale = 6.0F;
  row.max_sequence_length = 226;
  row.max_sequence_length_limit = 512;
  row.scheduler = v1::SCHEDULER_KIND_COGVIDEOX_DDIM;
  row.uses_classifier_free_guidance = true;
  row.joint_attention = true;
  row.num_frames = num_frames;
  row.frame_step = frame_step;
  row.fps = fps;
  row.supports_dynamic_cfg = true;
  return row;
}

// The 2b model's sincos table has rows for exactly 226 text tokens.
constexpr config::ModelDefaults WithFixedTextLength(config::ModelDefaults row) {
  row.max_sequence_length_limit = row.max_sequence_length;
  row.fixed_sequence_length = true;
  return row;
}

}  // namespace cogvideox_internal

// THUDM/CogVideoX-2b: 49 frames of 720×480 at 8 fps.
inline constexpr config::ModelDefaults kCogVideoX2bDefaults =
    cogvideox_internal::WithFixedTextLength(cogvideox_internal::Release(
        "cogvideox-2b", 480, 720, /*num_frames=*/49, /*frame_step=*/8,
        /*fps=*/8));

// THUDM/CogVideoX-5b: the same video; 3-D RoPE leaves the text length free.
inline constexpr config::ModelDefaults kCogVideoX5bDefaults =
    cogvideox_internal::Release("cogvideox-5b", 480, 720, /*num_frames=*/49,
                                /*frame_step=*/8, /*fps=*/8);

// THUDM/CogVideoX1.5-5B: 81 frames of 1360×768 at 16 fps; two latent frames
// per token, so the pipeline pads the latent frames in front.
inline constexpr config::ModelDefaults kCogVideoX15Defaults =
    cogvideox_internal::Release("cogvideox1.5-5b", 768, 1360,
                                /*num_frames=*/81, /*frame_step=*/16,
                                /*fps=*/16);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DEFAULTS_H_
