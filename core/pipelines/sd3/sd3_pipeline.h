#ifndef DITSERVE_CORE_PIPELINES_SD3_SD3_PIPELINE_H_
#define DITSERVE_CORE_PIPELINES_SD3_SD3_PIPELINE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/models/component_weights.h"
#include "core/models/layers/attention.h"
#include "core/models/sd3/sd3_transformer_2d_model.h"
#include "core/models/vae/autoencoder_kl.h"
#include "core/pipelines/cfg_split.h"
#include "core/pipelines/decoded_images.h"
#include "core/pipelines/pipefusion.h"
#include "core/pipelines/sequence_parallel.h"
#include "core/schedulers/flow_match_euler.h"

namespace ditserve::pipelines {

// One generation, every value explicit (they come from the frozen
// InputConfig; this pipeline has no defaults of its own).
struct SD3Request {
  // [B, S_txt, joint_attention_dim]: CLIP-L/G penultimate states (padded to
  // the T5 width) followed by T5 states, one row per image.
  at::Tensor prompt_embeds;
  // [B, pooled_projection_dim]: both pooled CLIP projections.
  at::Tensor pooled_prompt_embeds;
  // The same for the negative prompt; required when guidance_scale > 1
  // (classifier-free guidance), ignored otherwise.
  at::Tensor negative_prompt_embeds;
  at::Tensor negative_pooled_prompt_embeds;
  // Pixels; multiples of the VAE scale factor times the patch size.
  int64_t height = 0;
  int64_t width = 0;
  int num_inference_steps = 0;
  // > 1 enables classifier-free guidance, as in diffusers.
  float guidance_scale = 0.0F;
  // One seed per image (B entries): image i starts from InitialNoise(seed i).
  std::vector<uint64_t> seeds;
  // With guidance: run only this rank's branch and exchange the outputs
  // (CFG parallel). Unset: both branches in one batch.
  std::optional<CfgSplit> cfg_split;
  // Every transformer forward on this rank's shard of the sequence, gathered
  // over the sp group (sequence parallel). Unset: the whole sequence.
  std::optional<SequenceParallel> sequence_parallel;
  // Every transformer forward through this rank's PipeFusion stage (the
  // transformer holds the stage's blocks). At most one of
  // sequence_parallel and stages.
  std::optional<PipeFusionStages> stages;
};

// The transformer's output for `inputs` ([B, C, H, W], as Forward returns
// it), computed on this rank's shard of the sequence [image, text] and
// all-gathered over the sp group, so that every rank of the group holds
// it. Errors as GatherShardedForward and ForwardShard.
absl::StatusOr<at::Tensor> ShardedSD3Forward(
    models::SD3Transformer2DModel& transformer,
    const models::SD3TransformerInputs& inputs,
    const SequenceParallel& sequence_parallel);

// The transformer's output for `inputs` ([B, C, H, W], as Forward returns
// it) through this rank's PipeFusion stage at denoising step `step`: the
// whole sequence stage after stage in warm-up steps (StagedForward), the
// patch pipeline after them (PatchedForward; each patch's image tokens with
// the whole text, whose stream travels too). Errors as those.
absl::StatusOr<at::Tensor> PipeFusionSD3Forward(
    models::SD3Transformer2DModel& transformer,
    const models::SD3TransformerInputs& inputs, const PipeFusionStages& stages,
    int step);

struct SD3StepEvent {
  int step = 0;
  int num_steps = 0;
  // The step's timestep on the 0..1000 scale (0-dim float32).
  at::Tensor timestep;
  // Raw transformer output of the step ([negative, positive] with guidance;
  // with cfg_split both ranks' outputs after the exchange).
  at::Tensor noise_pred;
  // Latents after the scheduler step.
  at::Tensor latents;
};

// Called after every step; a non-OK status stops the loop and is returned
// (how cancellation and deadlines end a generation between steps).
using SD3StepObserver = std::function<absl::Status(const SD3StepEvent&)>;

struct SD3DecodeOutput {
  // latents / scaling_factor + shift_factor, as handed to the VAE.
  at::Tensor vae_input;
  DecodedImages images;
};

// diffusers StableDiffusion3Pipeline from prompt embeddings: seeded noise,
// flow-match Euler (the checkpoint's shift; mu from the image token count when
// the scheduler shifts dynamically), classifier-free guidance over the batch
// [negative, positive], VAE decode. Not thread-safe: one generation at a time.
class SD3Pipeline {
 public:
  SD3Pipeline(std::shared_ptr<models::SD3Transformer2DModel> transformer,
              std::shared_ptr<models::AutoencoderKL> vae,
              schedulers::FlowMatchEulerConfig scheduler_config,
              models::Placement placement);

  // transformer/, vae/ and scheduler/ of a diffusers SD3 folder.
  // With `blocks`, the transformer holds only those blocks (a PipeFusion
  // stage).
  static absl::StatusOr<std::unique_ptr<SD3Pipeline>> Load(
      const std::string& dir, std::shared_ptr<models::Attention> attention,
      const models::Placement& placement,
      std::optional<models::BlockRange> blocks = std::nullopt);

  // Starting latents [B, C, h, w] on the pipeline's device/dtype.
  absl::StatusOr<at::Tensor> InitialLatents(const SD3Request& request) const;

  // The denoise loop from `latents`; returns the final latents. `observer`
  // may be empty.
  absl::StatusOr<at::Tensor> Denoise(const SD3Request& request,
                                     at::Tensor latents,
                                     const SD3StepObserver& observer);

  absl::StatusOr<SD3DecodeOutput> Decode(const at::Tensor& latents);

  // InitialLatents, Denoise and Decode.
  absl::StatusOr<SD3DecodeOutput> Generate(const SD3Request& request,
                                           const SD3StepObserver& observer);

  // The scheduler a request of this size and step count steps through.
  absl::StatusOr<schedulers::FlowMatchEulerDiscreteScheduler> Schedule(
      int64_t height, int64_t width, int num_inference_steps) const;

  models::SD3Transformer2DModel& transformer() { return *transformer_; }

 private:
  absl::Status CheckRequest(const SD3Request& request) const;
  // The model's noise prediction at denoising step `step`, guided when the
  // request asks for it; `raw` receives the transformer output.
  absl::StatusOr<at::Tensor> PredictNoise(const SD3Request& request,
                                          const at::Tensor& latents,
                                          const at::Tensor& timestep, int step,
                                          at::Tensor& raw);
  int64_t latent_scale() const { return vae_->config().scale_factor(); }
  c10::TensorOptions options() const;

  std::shared_ptr<models::SD3Transformer2DModel> transformer_;
  std::shared_ptr<models::AutoencoderKL> vae_;
  schedulers::FlowMatchEulerConfig scheduler_config_;
  models::Placement placement_;
};

}  // namespace ditserve::pipelines

#endif  // DITSERVE_CORE_PIPELINES_SD3_SD3_PIPELINE_H_
