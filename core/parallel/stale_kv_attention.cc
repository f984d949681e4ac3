#include "core/parallel/stale_kv_attention.h"

#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace ditserve::parallel {

void StaleKvAttention::BeginWholeSequence() {
  rows_.reset();
  next_layer_ = 0;
}

void StaleKvAttention::BeginPatch(at::Tensor rows) {
  rows_ = std::move(rows);
  next_layer_ = 0;
}

at::Tensor StaleKvAttention::Attend(const at::Tensor& q, const at::Tensor& k,
                                    const at::Tensor& v,
                                    const std::optional<at::Tensor>& key_mask) {
  if (key_mask.has_value()) {
    throw std::invalid_argument(
        "StaleKvAttention takes no key mask: PipeFusion sequences are not "
        "padded");
  }
  const size_t layer = next_layer_++;
  if (!rows_.has_value()) {
    if (layer == layers_.size()) layers_.emplace_back();
    // Copies: the cache outlives this forward's tensors and is written in
    // place by later patches.
    layers_[layer] = {k.clone(), v.clone()};
    return local_.Attend(q, k, v, std::nullopt);
  }
  if (layer >= layers_.size()) {
    throw std::logic_error("StaleKvAttention: a patch forward reached layer " +
                           std::to_string(layer) +
                           " but the last whole-sequence forward had " +
                           std::to_string(layers_.size()) + " layers");
  }
  auto& [keys, values] = layers_[layer];
  // A layer over fewer tokens than the forward holds takes the leading ones
  // (see BeginPatch).
  const at::Tensor rows =
      k.size(2) == rows_->size(0) ? *rows_ : rows_->narrow(0, 0, k.size(2));
  keys.index_copy_(/*dim=*/2, rows, k);
  values.index_copy_(/*dim=*/2, rows, v);
  return local_.Attend(q, keys, values, std::nullopt);
}

}  // namespace ditserve::parallel
