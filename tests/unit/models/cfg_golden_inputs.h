#ifndef DITSERVE_TESTS_UNIT_MODELS_CFG_GOLDEN_INPUTS_H_
#define DITSERVE_TESTS_UNIT_MODELS_CFG_GOLDEN_INPUTS_H_

#include "core/families/pixart/pixart_transformer_2d_model.h"
#include "core/families/sd3/sd3_transformer_2d_model.h"
#include "tests/unit/models/golden_case.h"

namespace ditserve::testing {

// The transformer inputs of an SD3 golden case.
models::SD3TransformerInputs SD3GoldenInputs(const GoldenCase& golden);

// The transformer inputs of a PixArt golden case, without the micro
// conditions (only PixArt-α cases have them: PixArtGoldenMicroConditions).
models::PixArtTransformerInputs PixArtGoldenInputs(const GoldenCase& golden);
models::PixArtMicroConditions PixArtGoldenMicroConditions(
    const GoldenCase& golden);

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_UNIT_MODELS_CFG_GOLDEN_INPUTS_H_
