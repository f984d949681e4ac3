#ifndef DITSERVE_CORE_FAMILIES_PIXART_PIXART_FAMILY_H_
#define DITSERVE_CORE_FAMILIES_PIXART_PIXART_FAMILY_H_

#include <memory>

#include "core/families/family.h"
#include "core/families/pixart/pixart_transformer_2d_model.h"

namespace ditserve::families {

// PixArt-α and PixArt-Σ, as diffusers' PixArtAlphaPipeline and
// PixArtSigmaPipeline run them from prompt embeddings: T5 states with their
// mask attended by cross-attention, the checkpoint's scheduler (DPM-Solver,
// DDIM, ...), classifier-free guidance, the noise half of a learned-sigma
// output, α's micro-conditions (the generated size), and the decoded image
// resized back to the request after resolution binning.
const Family& PixArtFamily();

// One forward of `transformer` on `inputs`, whole, sharded or staged.
std::unique_ptr<BoundForward> BindPixArtForward(
    models::PixArtTransformer2DModel& transformer,
    models::PixArtTransformerInputs inputs);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_PIXART_PIXART_FAMILY_H_
