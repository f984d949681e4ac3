#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DEFAULTS_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DEFAULTS_H_

#include "core/config/model_defaults.h"

namespace ditserve::families {

// CogVideoXPipeline with the THUDM/CogVideoX-2b folder: 49 frames of 720×480
// at 8 fps, T5 at 226 tokens (fixed: the sincos table has rows for exactly
// 226), the folder's CogVideoXDDIMScheduler.
inline constexpr config::ModelDefaults kCogVideoX2bDefaults{
    .name = "cogvideox-2b",
    .height = 480,
    .width = 720,
    .num_inference_steps = 50,
    .guidance_scale = 6.0F,
    .max_sequence_length = 226,
    .max_sequence_length_limit = 226,
    .fixed_sequence_length = true,
    .scheduler = v1::SCHEDULER_KIND_COGVIDEOX_DDIM,
    .uses_classifier_free_guidance = true,
    .joint_attention = true,
    .num_frames = 49,
    .frame_step = 8,
    .fps = 8,
    .supports_dynamic_cfg = true};

// The same pipeline with THUDM/CogVideoX-5b (3-D RoPE instead of the sincos
// table, so the text length is free).
inline constexpr config::ModelDefaults kCogVideoX5bDefaults{
    .name = "cogvideox-5b",
    .height = 480,
    .width = 720,
    .num_inference_steps = 50,
    .guidance_scale = 6.0F,
    .max_sequence_length = 226,
    .max_sequence_length_limit = 512,
    .scheduler = v1::SCHEDULER_KIND_COGVIDEOX_DDIM,
    .uses_classifier_free_guidance = true,
    .joint_attention = true,
    .num_frames = 49,
    .frame_step = 8,
    .fps = 8,
    .supports_dynamic_cfg = true};

// THUDM/CogVideoX1.5-5B: 81 frames of 1360×768 at 16 fps; two latent frames
// per token, so the pipeline pads the latent frames in front.
inline constexpr config::ModelDefaults kCogVideoX15Defaults{
    .name = "cogvideox1.5-5b",
    .height = 768,
    .width = 1360,
    .num_inference_steps = 50,
    .guidance_scale = 6.0F,
    .max_sequence_length = 226,
    .max_sequence_length_limit = 512,
    .scheduler = v1::SCHEDULER_KIND_COGVIDEOX_DDIM,
    .uses_classifier_free_guidance = true,
    .joint_attention = true,
    .num_frames = 81,
    .frame_step = 16,
    .fps = 16,
    .supports_dynamic_cfg = true};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_DEFAULTS_H_
