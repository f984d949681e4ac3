#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_PIPEFUSION_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_PIPEFUSION_H_

#include <ATen/core/Tensor.h>

#include "absl/status/statusor.h"
#include "core/families/cogvideox/cogvideox_transformer_3d_model.h"
#include "core/parallel/pipefusion.h"

namespace ditserve::families {

// The output [B, F, C, H, W] of `transformer` (this rank's PipeFusion stage)
// at denoising step `step`: the whole joint sequence stage after stage in
// warm-up steps, the patch pipeline after them. Both streams travel between
// stages (CogVideoX's blocks update the text tokens too); a patch is a run
// of whole rows of video tokens, frame after frame, with the whole text.
absl::StatusOr<at::Tensor> CogVideoXStagedForward(
    CogVideoXTransformer3DModel& transformer,
    const CogVideoXTransformerInputs& inputs,
    const parallel::PipeFusionStages& stages, int step);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_PIPEFUSION_H_
