#ifndef DITSERVE_CORE_FAMILIES_FLUX_FLUX_PIPELINE_STAGES_H_
#define DITSERVE_CORE_FAMILIES_FLUX_FLUX_PIPELINE_STAGES_H_

#include <ATen/core/Tensor.h>

#include "absl/status/statusor.h"
#include "core/families/flux/flux_transformer_2d_model.h"
#include "core/parallel/pipefusion.h"

namespace ditserve::families {

// StagedForward of a FLUX stage: the transformer's output for `inputs` ([B,
// S_img, patch^2 * out_channels], as Forward returns it). The text and
// image streams travel between stages.
absl::StatusOr<at::Tensor> StagedFluxForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const parallel::PipeFusionStages& stages);

// PatchedForward of a FLUX stage: each patch's image tokens with the text
// tokens, [text, patch] in the joint sequence's order.
absl::StatusOr<at::Tensor> PatchedFluxForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const parallel::PipeFusionStages& stages);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_FLUX_FLUX_PIPELINE_STAGES_H_
