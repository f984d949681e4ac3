#ifndef DITSERVE_CORE_PARALLEL_STALE_KV_ATTENTION_H_
#define DITSERVE_CORE_PARALLEL_STALE_KV_ATTENTION_H_

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "core/parallel/attention.h"
#include "core/parallel/local_attention.h"

namespace ditserve::parallel {

// PipeFusion's attention on one stage (xDiT's patch pipeline): every layer
// keeps the keys and values of the whole sequence from the last forward that
// computed them. A forward over the whole sequence (a warm-up step) refills
// them; a forward over one patch's tokens writes that patch's fresh rows and
// attends over all rows, so the other patches' keys and values are the ones
// of the previous step (or of this step for patches already computed).
//
// Layers are told apart by the order of their calls within a forward, which
// is fixed for a model. Not thread-safe: one forward at a time.
class StaleKvAttention final : public Attention {
 public:
  // Starts a forward over the whole sequence.
  void BeginWholeSequence();
  // Starts a forward over the tokens at positions `rows` (int64 [S_patch],
  // positions in the whole sequence, in the order the tokens come). Needs a
  // whole-sequence forward before it, with the same layers. A layer that
  // attends over fewer tokens than `rows` (SD3.5's image-only attn2 after
  // the joint [image, text] attention) holds the leading ones, at the
  // leading positions.
  void BeginPatch(at::Tensor rows);

  // `key_mask` must be empty: PipeFusion runs without sequence padding.
  at::Tensor Attend(const at::Tensor& q, const at::Tensor& k,
                    const at::Tensor& v,
                    const std::optional<at::Tensor>& key_mask) override;

 private:
  LocalAttention local_;
  // Per layer: keys and values [B, H, S, D] of the whole sequence.
  std::vector<std::pair<at::Tensor, at::Tensor>> layers_;
  size_t next_layer_ = 0;
  // Positions of the current forward's tokens; nullopt for a whole one.
  std::optional<at::Tensor> rows_;
};

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_STALE_KV_ATTENTION_H_
