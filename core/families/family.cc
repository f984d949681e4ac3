#include "core/families/family.h"

#include <ATen/ATen.h>

namespace ditserve::families {
namespace {

at::Tensor ConcatDefined(const at::Tensor& first, const at::Tensor& second) {
  if (!first.defined()) return first;
  return at::cat({first, second}, /*dim=*/0);
}

}  // namespace

absl::Status NoPromptEncoders() {
  return absl::FailedPreconditionError(
      "the model was loaded without its prompt encoders (from prompt "
      "embeddings only)");
}

Conditioning ConcatBatches(const Conditioning& first,
                           const Conditioning& second) {
  return Conditioning{.states = ConcatDefined(first.states, second.states),
                      .pooled = ConcatDefined(first.pooled, second.pooled),
                      .mask = ConcatDefined(first.mask, second.mask)};
}

}  // namespace ditserve::families
