#ifndef DITSERVE_CORE_PARALLEL_STAGE_ROWS_H_
#define DITSERVE_CORE_PARALLEL_STAGE_ROWS_H_

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "core/parallel/pipefusion.h"

namespace ditserve::parallel {

// StageModel::AttentionRows of a model whose attention sequence is
// [text | image] (FLUX, CogVideoX): every text row when the patch has the
// text, then the patch's image rows.
at::Tensor TextFirstAttentionRows(int64_t text_tokens, const StagePatch& patch);

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_STAGE_ROWS_H_
