#include "core/parallel/stale_kv_attention.h"

#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "absl/strings/str_cat.h"

namespace ditserve::parallel {

StaleKvAttention::StaleKvAttention(StaleKvSharing sharing)
    : sharing_(std::move(sharing)) {}

void StaleKvAttention::BeginWholeSequence(at::Tensor rows) {
  Begin(std::move(rows), /*whole_sequence=*/true);
}

void StaleKvAttention::BeginPatch(at::Tensor rows) {
  Begin(std::move(rows), /*whole_sequence=*/false);
}

void StaleKvAttention::Begin(at::Tensor rows, bool whole_sequence) {
  const int64_t ring = sharing_.ring.has_value() ? sharing_.ring->size() : 1;
  if (rows.dim() != 2 || rows.size(0) != ring * sharing_.ulysses) {
    throw std::invalid_argument(absl::StrCat(
        "StaleKvAttention needs rows [ring × ulysses = ",
        ring * sharing_.ulysses, ", tokens]; got ", c10::str(rows.sizes())));
  }
  rows_ = std::move(rows);
  device_rows_.clear();
  whole_sequence_ = whole_sequence;
  next_layer_ = 0;
}

at::Tensor StaleKvAttention::Attend(const at::Tensor& q, const at::Tensor& k,
                                    const at::Tensor& v,
                                    const std::optional<at::Tensor>& key_mask) {
  if (key_mask.has_value()) {
    throw std::invalid_argument(
        "StaleKvAttention takes no key mask: PipeFusion forwards are not "
        "padded");
  }
  if (!rows_.defined()) {
    throw std::logic_error("StaleKvAttention: Attend before a Begin call");
  }
  const size_t layer = next_layer_++;
  // k holds `per_rank` tokens of each Ulysses rank (the leading ones of its
  // row, see BeginWholeSequence); the ring's ranks bring theirs in ring
  // order, which makes rows_'s sp order.
  const int64_t per_rank = k.size(2) / sharing_.ulysses;
  if (per_rank * sharing_.ulysses != k.size(2) || per_rank > rows_.size(1)) {
    throw std::logic_error(absl::StrCat(
        "StaleKvAttention: layer ", layer, " got ", k.size(2),
        " keys, not ulysses ", sharing_.ulysses, " × at most ", rows_.size(1)));
  }
  const at::Tensor positions = rows_.narrow(1, 0, per_rank).reshape({-1});
  // Models give rows on the CPU; the cache may sit on a GPU. A copy from
  // pinned memory does not wait for the GPU to catch up.
  at::Tensor& rows = device_rows_[per_rank];
  if (!rows.defined()) {
    rows = k.is_cuda()
               ? positions.pin_memory().to(k.device(), /*non_blocking=*/true)
               : positions;
  }
  at::Tensor fresh = at::stack({k, v});
  // A layer without fresh tokens (the image-only attention of a text-only
  // forward) has nothing to share, on every ring rank alike: their shares are
  // equal. Gloo divides by the element count.
  if (sharing_.ring.has_value() && fresh.numel() > 0) {
    fresh = AllGather(*sharing_.ring,
                      "PipeFusion all-gather of the ring's keys and values",
                      fresh, /*dim=*/3);
  }
  if (whole_sequence_) {
    if (layer == layers_.size()) layers_.emplace_back();
    // Fresh tensors: the cache outlives this forward's and is written in
    // place by later patches.
    std::vector<int64_t> shape = k.sizes().vec();
    shape[2] = positions.max().item<int64_t>() + 1;
    layers_[layer] = {at::zeros(shape, k.options()),
                      at::zeros(shape, v.options())};
  } else if (layer >= layers_.size()) {
    throw std::logic_error("StaleKvAttention: a patch forward reached layer " +
                           std::to_string(layer) +
                           " but the last whole-sequence forward had " +
                           std::to_string(layers_.size()) + " layers");
  }
  auto& [keys, values] = layers_[layer];
  keys.index_copy_(/*dim=*/2, rows, fresh[0]);
  values.index_copy_(/*dim=*/2, rows, fresh[1]);
  return local_.Attend(q, keys, values, std::nullopt);
}

}  // namespace ditserve::parallel
