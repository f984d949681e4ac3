#include "core/parallel/stage_rows.h"

#include <torch/torch.h>

namespace ditserve::parallel {

at::Tensor TextFirstAttentionRows(int64_t text_tokens,
                                  const models::TokenSpan& patch) {
  return at::cat(
      {at::arange(text_tokens, at::kLong),
       text_tokens + patch.begin + at::arange(patch.tokens, at::kLong)});
}

}  // namespace ditserve::parallel
