#ifndef DITSERVE_CORE_FAMILIES_FLUX_FLUX_DEFAULTS_H_
#define DITSERVE_CORE_FAMILIES_FLUX_FLUX_DEFAULTS_H_

#include "core/config/model_defaults.h"

namespace ditserve::families {

// diffusers' FluxPipeline defaults with FLUX.1-dev's scheduler config.
inline constexpr config::ModelDefaults kFluxDevDefaults{
    .name = "flux-dev",
    .height = 1024,
    .width = 1024,
    .num_inference_steps = 28,
    .guidance_scale = 3.5F,
    .max_sequence_length = 512,
    .max_sequence_length_limit = 512,
    .scheduler = v1::SCHEDULER_KIND_FLOW_MATCH_EULER,
    .scheduler_shift = 3.0F,
    .scheduler_dynamic_shift = true,
    .uses_guidance_embedding = true,
    .joint_attention = true};

// FLUX.1-schnell: timestep-distilled, 4 steps, no guidance.
inline constexpr config::ModelDefaults kFluxSchnellDefaults{
    .name = "flux-schnell",
    .height = 1024,
    .width = 1024,
    .num_inference_steps = 4,
    .guidance_scale = 0.0F,
    .max_sequence_length = 256,
    .max_sequence_length_limit = 512,
    .scheduler = v1::SCHEDULER_KIND_FLOW_MATCH_EULER,
    .scheduler_shift = 1.0F,
    .joint_attention = true};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_FLUX_FLUX_DEFAULTS_H_
