#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_FAMILY_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_FAMILY_H_

#include "core/families/family.h"

namespace ditserve::families {

// CogVideoX-2b, -5b and 1.5-5B text to video, as diffusers' CogVideoXPipeline
// runs them: T5 states (no mask) in front of the video tokens in one joint
// sequence, latents [B, F, C, h, w] (1.5: padded in front to whole temporal
// patches, the padding dropped before decoding), classifier-free guidance
// (optionally diffusers' dynamic CFG), the folder's CogVideoXDDIMScheduler or
// CogVideoXDPMScheduler (seeded noise per image), and the causal 3-D VAE
// decoded in frame chunks. Whole, sequence-parallel and PipeFusion-stage
// forwards (both streams travel between stages).
const Family& CogVideoXFamily();

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_FAMILY_H_
