#ifndef DITSERVE_CORE_PIPELINES_FLUX_FLUX_PIPELINE_STAGES_H_
#define DITSERVE_CORE_PIPELINES_FLUX_FLUX_PIPELINE_STAGES_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/models/flux/flux_transformer_2d_model.h"
#include "core/parallel/group_collectives.h"
#include "core/parallel/stale_kv_attention.h"

namespace ditserve::pipelines {

// The patch argument of receive_buffer for a tensor with the whole
// sequence's shape, which includes the text stream of every patch.
inline constexpr int kWholeSequence = -1;

// What a PipeFusion stage receives from another stage.
enum class FluxStageTensor {
  // The previous stage's text stream [B, S_txt, dim].
  kTextStream,
  // The previous stage's image stream [B, S_img, dim].
  kImageStream,
  // The last stage's noise prediction [B, S_img, patch^2 * out_channels].
  kNoisePrediction,
};

// How every transformer forward of a generation is split over the PipeFusion
// (pp) group: group rank s runs stage s, whose transformer holds the s-th
// block range and attends through `stale_kv`.
struct FluxPipelineStages {
  parallel::Group group;
  // Where a received tensor of `shape` goes (for image patch `patch`, or
  // kWholeSequence): the planned buffer, or an error when the shape is not
  // the planned one (pipelines sit below the engine that owns the buffers).
  std::function<absl::StatusOr<at::Tensor>(FluxStageTensor tensor, int patch,
                                           const std::vector<int64_t>& shape)>
      receive_buffer;
  // The attention of this stage's transformer (required: every forward
  // tells it which rows it computes).
  std::shared_ptr<parallel::StaleKvAttention> stale_kv;
  // Steps run over the whole sequence before the patch pipeline starts
  // (InputConfig warmup_steps).
  int warmup_steps = 0;
  // Image-token offsets of the patches (InputConfig
  // pipefusion_patch_token_offsets: patches + 1 entries, 0 to S_img).
  std::vector<int64_t> patch_offsets;

  // Whether denoising step `step` (from 0) runs StagedFluxForward rather
  // than PatchedFluxForward: the warm-up steps, and always the first, since
  // patches need the keys and values of a previous step.
  bool IsWholeSequenceStep(int step) const {
    return step < warmup_steps || step == 0;
  }
};

// The transformer's output for `inputs` (as Forward returns it), computed
// stage after stage: stage 0 embeds and runs its blocks, each stage passes
// its (text, image) streams to the next, and the last stage's noise
// prediction is sent to every stage, so that all stages step identical
// latents. Every rank of the group calls it with the same inputs. Errors of
// ForwardStage and StageOutput, of the receive buffers, and the Status of a
// failed transfer.
absl::StatusOr<at::Tensor> StagedFluxForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const FluxPipelineStages& stages);

// The same output from PipeFusion's patch pipeline (a step after the warm-up
// steps): the image tokens go through the stages patch after patch, each
// patch's tokens with the text tokens, attending to the other patches' keys
// and values as this stage last computed them (one step stale for later
// patches). A stage sends a patch on and starts the next one while the next
// stage works on it; the last stage sends each patch's prediction to every
// stage. Needs a StagedFluxForward of the same request before it. Errors as
// StagedFluxForward.
absl::StatusOr<at::Tensor> PatchedFluxForward(
    models::FluxTransformer2DModel& transformer,
    const models::FluxTransformerInputs& inputs,
    const FluxPipelineStages& stages);

}  // namespace ditserve::pipelines

#endif  // DITSERVE_CORE_PIPELINES_FLUX_FLUX_PIPELINE_STAGES_H_
