#ifndef DITSERVE_CORE_FAMILIES_FLUX_FLUX_PIPELINE_STAGES_H_
#define DITSERVE_CORE_FAMILIES_FLUX_FLUX_PIPELINE_STAGES_H_

#include <ATen/core/Tensor.h>

#include "absl/status/statusor.h"
#include "core/families/flux/flux_transformer_2d_model.h"
#include "core/parallel/pipefusion.h"

namespace ditserve::families {

// parallel::StageForward of a FLUX stage at denoising step `step`: the
// transformer's output for `inputs` ([B, S_img, patch^2 * out_channels], as
// Forward returns it). The text and image streams travel between stages; the
// joint sequence is [text, image].
absl::StatusOr<at::Tensor> FluxStageForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const parallel::PipeFusionStages& stages, int step);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_FLUX_FLUX_PIPELINE_STAGES_H_
