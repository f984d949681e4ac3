#ifndef DITSERVE_CORE_FAMILIES_SD3_SD3_DEFAULTS_H_
#define DITSERVE_CORE_FAMILIES_SD3_SD3_DEFAULTS_H_

#include "core/config/model_defaults.h"

namespace ditserve::families {

// diffusers' StableDiffusion3Pipeline defaults with SD3-medium's scheduler
// config. The size is SD3-medium's; a served checkpoint's comes from its
// transformer's sample_size (SD3::Detect in sd3_family.cc), as in diffusers.
inline constexpr config::ModelDefaults kSD3MediumDefaults{
    .name = "sd3-medium",
    .height = 1024,
    .width = 1024,
    .num_inference_steps = 28,
    .guidance_scale = 7.0F,
    .max_sequence_length = 256,
    .max_sequence_length_limit = 512,
    .scheduler = v1::SCHEDULER_KIND_FLOW_MATCH_EULER,
    .scheduler_shift = 3.0F,
    .uses_classifier_free_guidance = true,
    .joint_attention = true,
    .clip_sequence_tokens = 77};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_SD3_SD3_DEFAULTS_H_
