#include "core/parallel/stage_rows.h"

#include <torch/torch.h>

namespace ditserve::parallel {

at::Tensor TextFirstAttentionRows(int64_t text_tokens,
                                  const StagePatch& patch) {
  return at::cat({at::arange(patch.text ? text_tokens : 0, at::kLong),
                  text_tokens + patch.image.begin +
                      at::arange(patch.image.tokens, at::kLong)});
}

}  // namespace ditserve::parallel
