#ifndef DITSERVE_CORE_FAMILIES_SD3_SD3_FAMILY_H_
#define DITSERVE_CORE_FAMILIES_SD3_SD3_FAMILY_H_

#include <memory>

#include "core/families/family.h"
#include "core/families/sd3/sd3_transformer_2d_model.h"

namespace ditserve::families {

// Stable Diffusion 3 (and 3.5), as diffusers' StableDiffusion3Pipeline runs
// it: CLIP-L, CLIP-G and T5 states attended jointly with the image tokens
// (sequence [image, text]), pooled CLIP projections, flow-match Euler with
// the checkpoint's shift (mu from the image token count when it shifts
// dynamically) and classifier-free guidance.
const Family& SD3Family();

// One forward of `transformer` on `inputs`, whole, sharded or staged.
std::unique_ptr<BoundForward> BindSD3Forward(
    models::SD3Transformer2DModel& transformer,
    models::SD3TransformerInputs inputs);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_SD3_SD3_FAMILY_H_
