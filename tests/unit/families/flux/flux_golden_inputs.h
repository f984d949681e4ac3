#ifndef DITSERVE_TESTS_UNIT_FAMILIES_FLUX_FLUX_GOLDEN_INPUTS_H_
#define DITSERVE_TESTS_UNIT_FAMILIES_FLUX_FLUX_GOLDEN_INPUTS_H_

#include "absl/status/statusor.h"
#include "core/families/flux/flux_transformer_2d_model.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::testing {

// The transformer inputs of a FLUX golden case; `guidance` only for
// checkpoints with guidance_embeds (FLUX.1-dev).
models::FluxTransformerInputs FluxGoldenInputs(const GoldenCase& golden,
                                               bool guidance);

// What the whole transformer of a FLUX golden case gives for `inputs` on one
// rank with local attention: the reference a parallel forward must match.
absl::StatusOr<at::Tensor> SingleRankFluxForward(
    const GoldenCase& golden, const models::FluxTransformerInputs& inputs);

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_UNIT_FAMILIES_FLUX_FLUX_GOLDEN_INPUTS_H_
