#ifndef DITSERVE_CORE_PARALLEL_PIPEFUSION_H_
#define DITSERVE_CORE_PARALLEL_PIPEFUSION_H_

// PipeFusion (xDiT's patch pipeline) for any transformer whose blocks are
// split into stages: the driver moves streams between the stages of a pp
// group; each family adapts its model through StageModel.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/models/sequence_shard.h"
#include "core/parallel/group_collectives.h"
#include "core/parallel/stale_kv_attention.h"

namespace ditserve::parallel {

// The patch argument of receive_buffer for a tensor with the whole
// sequence's shape, which includes the text stream of every patch.
inline constexpr int kWholeSequence = -1;

// What a PipeFusion stage receives from another stage.
enum class StageTensor {
  // The previous stage's text stream [B, S_txt, dim] (models whose blocks
  // update the text tokens: FLUX, SD3).
  kTextStream,
  // The previous stage's image stream [B, S_img, dim].
  kImageStream,
  // The last stage's output for the image tokens [B, S_img, channels].
  kNoisePrediction,
};

// How every transformer forward of a generation is split over the PipeFusion
// (pp) group: group rank s runs stage s, whose transformer holds the s-th
// block range and attends through `stale_kv`.
struct PipeFusionStages {
  // Carries the streams from each stage to the next.
  parallel::Group group;
  // The same ranks in another group, which carries the last stage's noise
  // predictions back to the earlier stages (dist::MeshGroups::pp_feedback
  // says why).
  parallel::Group feedback;
  // Where a received tensor of `shape` goes (for image patch `patch`, or
  // kWholeSequence): the planned buffer, or an error when the shape is not
  // the planned one (the parallel methods sit below the engine that owns the
  // buffers).
  std::function<absl::StatusOr<at::Tensor>(StageTensor tensor, int patch,
                                           const std::vector<int64_t>& shape)>
      receive_buffer;
  // The attention of this stage's transformer (required: every forward
  // tells it which rows it computes).
  std::shared_ptr<parallel::StaleKvAttention> stale_kv;
  // With sequence parallelism (ring × ulysses > 1): the stage's sp group,
  // whose group rank is the sp index. Its ranks split the image tokens of
  // every forward (config::PipeFusionShardOf), each passing its share along
  // its own pp group; they share keys and values through `stale_kv` and
  // all-gather the output. Unset without sequence parallelism.
  std::optional<parallel::Group> sp;
  // Steps run over the whole sequence before the patch pipeline starts
  // (InputConfig warmup_steps).
  int warmup_steps = 0;
  // Image-token offsets of the patches (InputConfig
  // pipefusion_patch_token_offsets: patches + 1 entries, 0 to S_img).
  std::vector<int64_t> patch_offsets;
  // Called with the seconds of each wait for another stage's tensors (its
  // receives, and its sends that must complete before it goes on): the
  // rank's share of the pipeline bubble. May be empty.
  std::function<void(double seconds)> waited;
  // Denoising steps of the request (InputConfig num_inference_steps), 0 when
  // unknown. The last step's patch pipeline leaves the text patch out: no
  // later step reads its keys and values.
  int steps = 0;

  // Whether denoising step `step` (from 0) runs the whole sequence rather
  // than the patch pipeline: the warm-up steps, and always the first, since
  // patches need the keys and values of a previous step.
  bool IsWholeSequenceStep(int step) const {
    return step < warmup_steps || step == 0;
  }
  bool IsLastStep(int step) const { return step == steps - 1; }
};

// The tokens of one stage forward: a span of the image tokens, and whether
// the text tokens go with them. A whole-sequence forward takes both; a patch
// step sends the text through the stages once, as a patch of its own after
// the image patches, so that each step computes every token once.
struct StagePatch {
  models::TokenSpan image;
  bool text = false;
};

// The streams one stage hands the next.
struct StageStreams {
  // [B, tokens, dim] of the image tokens the forward ran on.
  at::Tensor image;
  // [B, S_txt, dim] with the text tokens, [B, 0, dim] without them;
  // undefined for models that do not pass one.
  at::Tensor text;
};

// One family's transformer stage with one forward's inputs, as the driver
// runs it. Image tokens are numbered in the model's token order (row-major
// patches of the latent grid); a patch is a span of them.
class StageModel {
 public:
  virtual ~StageModel() = default;

  virtual int64_t batch() const = 0;
  virtual int64_t image_tokens() const = 0;
  // Tokens of the text stream passed between stages; 0 when none is.
  virtual int64_t text_tokens() const = 0;
  virtual int64_t hidden_size() const = 0;
  // Channels of the output per image token.
  virtual int64_t output_channels() const = 0;
  // Positions in the attention sequence (the whole sequence StaleKvAttention
  // caches) of the tokens a forward over `patch` attends from, in the order
  // the model passes them to the attention.
  virtual at::Tensor AttentionRows(const StagePatch& patch) const = 0;
  // This stage's blocks on the tokens of `patch`: the first stage embeds the
  // inputs and takes no `incoming`; a later one continues from the previous
  // stage's streams, which hold the patch's tokens (a stream without tokens
  // is [B, 0, dim]).
  virtual absl::StatusOr<StageStreams> Forward(
      const StagePatch& patch, const std::optional<StageStreams>& incoming) = 0;
  // The last stage's output [B, patch.tokens, output_channels] from the
  // image stream its Forward returned.
  virtual absl::StatusOr<at::Tensor> Output(const models::TokenSpan& patch,
                                            const at::Tensor& image) = 0;
};

// The model's output for every image token [B, S_img, output_channels] at
// denoising step `step` (from 0), which every rank of the group (and of the
// sp group) computes with the same inputs; under sequence parallelism each
// rank runs its share of the image tokens.
//
// A whole-sequence step (PipeFusionStages::IsWholeSequenceStep) runs stage
// after stage: stage 0 embeds and runs its blocks, each stage passes its
// streams to the next, and the last stage's output is sent to every stage,
// so that all stages step identical latents.
//
// Later steps run PipeFusion's patch pipeline: the image tokens patch after
// patch, then the text tokens (for models with a text stream, but not in the
// last step), go through the stages, each attending to the keys and values
// of the other tokens as this stage last computed them (this step's for
// earlier patches, the previous step's for the text and later patches). A
// stage sends a patch on and starts the next one while the next stage works
// on it; the last stage sends each patch's output to every stage.
//
// INVALID_ARGUMENT for patch offsets that do not split the image tokens;
// errors of the model and of the receive buffers; the Status of a failed
// transfer.
absl::StatusOr<at::Tensor> StageForward(StageModel& model,
                                        const PipeFusionStages& stages,
                                        int step);

}  // namespace ditserve::parallel

#endif  // DITSERVE_CORE_PARALLEL_PIPEFUSION_H_
