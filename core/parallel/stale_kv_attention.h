#ifndef DITSERVE_CORE_PARALLEL_STALE_KV_ATTENTION_H_
#define DITSERVE_CORE_PARALLEL_STALE_KV_ATTENTION_H_

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/models/layers/attention.h"
#include "core/parallel/group_collectives.h"
#include "core/parallel/local_attention.h"

namespace ditserve::parallel {

// How the sequence-parallel ranks of one PipeFusion stage share the keys and
// values they compute when every forward's tokens are split over them
// (PipeFusion × sequence parallelism).
struct StaleKvSharing {
  // The stage's ring group: its ranks all-gather the keys and values each
  // computed, so every ring rank caches the whole sequence. Unset when the
  // ring degree is 1.
  std::optional<Group> ring;
  // The Ulysses degree. Above 1 the attention sits inside UlyssesAttention,
  // so Attend gets the tokens of every Ulysses rank (in Ulysses-rank order)
  // for H / ulysses heads, and the cache holds those heads only.
  int ulysses = 1;
};

// PipeFusion's attention on one stage (xDiT's patch pipeline): every layer
// keeps the keys and values of the whole sequence from the last forward that
// computed them. A forward over the whole sequence (a warm-up step) refills
// them; a forward over one patch's tokens writes that patch's fresh rows and
// attends over all rows, so the other patches' keys and values are the ones
// of the previous step (or of this step for patches already computed).
//
// Layers are told apart by the order of their calls within a forward, which
// is fixed for a model. Not thread-safe: one forward at a time. Attend
// throws base::StatusError when the ring's all-gather fails.
class StaleKvAttention final : public models::Attention {
 public:
  // Without sequence parallelism.
  StaleKvAttention() = default;
  explicit StaleKvAttention(StaleKvSharing sharing);

  // Start a forward over the whole sequence, or over a patch after one over
  // the whole sequence with the same layers. `rows`: int64 [sp, S], row i the
  // positions in the whole sequence of the tokens sp rank i's forward holds,
  // in the order it passes them (sp rank ring_index × ulysses +
  // ulysses_index; without sequence parallelism one row). The rows of a
  // whole-sequence forward cover every position. A layer that attends over
  // fewer tokens than a row (SD3.5's image-only attn2 after the joint
  // [image, text] attention) holds each row's leading ones.
  void BeginWholeSequence(at::Tensor rows);
  void BeginPatch(at::Tensor rows);

  // `key_mask` must be empty: PipeFusion's forwards are not padded.
  at::Tensor Attend(const at::Tensor& q, const at::Tensor& k,
                    const at::Tensor& v,
                    const std::optional<at::Tensor>& key_mask) override;

 private:
  void Begin(at::Tensor rows, bool whole_sequence);

  StaleKvSharing sharing_;
  LocalAttention local_;
  // Per layer: keys and values [B, H, S, D] of the whole sequence.
  std::vector<std::pair<at::Tensor, at::Tensor>> layers_;
  size_t next_layer_ = 0;
  at::Tensor rows_;
  // rows_'s positions on the cache's device, by keys per Ulysses rank: one
  // copy per forward rather than one per layer.
  std::map<int64_t, at::Tensor> device_rows_;
  bool whole_sequence_ = false;
};

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_STALE_KV_ATTENTION_H_
