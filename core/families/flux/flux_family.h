#ifndef DITSERVE_CORE_FAMILIES_FLUX_FLUX_FAMILY_H_
#define DITSERVE_CORE_FAMILIES_FLUX_FLUX_FAMILY_H_

#include "core/families/family.h"

namespace ditserve::families {

// FLUX.1-dev and FLUX.1-schnell, as diffusers' FluxPipeline runs them: T5 and
// pooled CLIP conditioning, 2×2-packed latents attended jointly with the text
// (RoPE positions), flow-match Euler with sigmas linspace(1, 1/N, N) shifted
// by the image token count, and guidance_scale in the guidance embedding
// (dev) or unused (schnell).
const Family& FluxFamily();

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_FLUX_FLUX_FAMILY_H_
