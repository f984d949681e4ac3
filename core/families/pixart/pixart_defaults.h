#ifndef DITSERVE_CORE_FAMILIES_PIXART_PIXART_DEFAULTS_H_
#define DITSERVE_CORE_FAMILIES_PIXART_PIXART_DEFAULTS_H_

#include "core/config/model_defaults.h"

namespace ditserve::families {

// diffusers' PixArtAlphaPipeline defaults. The sizes here are the 1024
// models'; a served checkpoint's comes from its transformer's sample_size
// (PixArt::Detect in pixart_family.cc), as in
// diffusers.
inline constexpr config::ModelDefaults kPixArtAlphaDefaults{
    .name = "pixart-alpha",
    .height = 1024,
    .width = 1024,
    .num_inference_steps = 20,
    .guidance_scale = 4.5F,
    .max_sequence_length = 120,
    .max_sequence_length_limit = 512,
    .scheduler = v1::SCHEDULER_KIND_DPM_SOLVER_MULTISTEP,
    .use_resolution_binning = true,
    .uses_classifier_free_guidance = true};

// diffusers' PixArtSigmaPipeline defaults (longer prompts than α).
inline constexpr config::ModelDefaults kPixArtSigmaDefaults{
    .name = "pixart-sigma",
    .height = 1024,
    .width = 1024,
    .num_inference_steps = 20,
    .guidance_scale = 4.5F,
    .max_sequence_length = 300,
    .max_sequence_length_limit = 512,
    .scheduler = v1::SCHEDULER_KIND_DPM_SOLVER_MULTISTEP,
    .use_resolution_binning = true,
    .uses_classifier_free_guidance = true};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_PIXART_PIXART_DEFAULTS_H_
