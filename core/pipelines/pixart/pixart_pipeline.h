#ifndef DITSERVE_CORE_PIPELINES_PIXART_PIXART_PIPELINE_H_
#define DITSERVE_CORE_PIPELINES_PIXART_PIXART_PIPELINE_H_

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
#include "core/models/pixart/pixart_transformer_2d_model.h"
#include "core/models/vae/autoencoder_kl.h"
#include "core/pipelines/cfg_split.h"
#include "core/pipelines/decoded_images.h"
#include "core/pipelines/pipefusion.h"
#include "core/pipelines/pixart/resolution_binning.h"
#include "core/pipelines/sequence_parallel.h"
#include "core/schedulers/scheduler.h"
#include "nlohmann/json.hpp"

namespace ditserve::pipelines {

// One generation, every value explicit (they come from the frozen
// InputConfig; this pipeline has no defaults of its own).
struct PixArtRequest {
  // [B, S_txt, caption_channels] T5 states and their [B, S_txt] masks
  // (1 = token, 0 = padding), one row per image.
  at::Tensor prompt_embeds;
  at::Tensor prompt_attention_mask;
  // The same for the negative prompt (the empty prompt by default); required
  // when guidance_scale > 1 (classifier-free guidance), ignored otherwise.
  at::Tensor negative_prompt_embeds;
  at::Tensor negative_prompt_attention_mask;
  // Pixels generated; multiples of the VAE scale factor times the patch size.
  // With resolution binning, the bin (see resolution_binning.h).
  int64_t height = 0;
  int64_t width = 0;
  // With resolution binning, the size the caller asked for: the decoded image
  // is resized and centre-cropped to it. Unset: the image is height x width.
  std::optional<config::ImageSize> output_size;
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
// it), computed on this rank's shard of the image tokens and
// all-gathered over the sp group, so that every rank of the group holds
// it. Errors as GatherShardedForward and ForwardShard.
absl::StatusOr<at::Tensor> ShardedPixArtForward(
    models::PixArtTransformer2DModel& transformer,
    const models::PixArtTransformerInputs& inputs,
    const SequenceParallel& sequence_parallel);

// The transformer's output for `inputs` ([B, C, H, W], as Forward returns
// it) through this rank's PipeFusion stage at denoising step `step`: the
// whole sequence stage after stage in warm-up steps (StagedForward), the
// patch pipeline after them (PatchedForward). Errors as those.
absl::StatusOr<at::Tensor> PipeFusionPixArtForward(
    models::PixArtTransformer2DModel& transformer,
    const models::PixArtTransformerInputs& inputs,
    const PipeFusionStages& stages, int step);

struct PixArtStepEvent {
  int step = 0;
  int num_steps = 0;
  // The step's timestep (0-dim int64 for DPM-Solver and DDIM).
  at::Tensor timestep;
  // Raw transformer output of the step: [negative, positive] batch with
  // guidance (with cfg_split: both ranks' outputs after the exchange), all
  // out_channels (learned sigma included).
  at::Tensor noise_pred;
  // Latents after the scheduler step.
  at::Tensor latents;
};

// Called after every step; a non-OK status stops the loop and is returned
// (how cancellation and deadlines end a generation between steps).
using PixArtStepObserver = std::function<absl::Status(const PixArtStepEvent&)>;

struct PixArtDecodeOutput {
  // latents / scaling_factor, as handed to the VAE.
  at::Tensor vae_input;
  DecodedImages images;
};

// diffusers PixArtAlphaPipeline / PixArtSigmaPipeline from prompt embeddings
// (resolution binning is the caller's choice of height and width): seeded
// noise, the checkpoint's scheduler, classifier-free guidance over the batch
// [negative, positive], the noise half of a learned-sigma output, VAE decode.
// α's micro-conditions are the requested height and width. Not thread-safe:
// one generation at a time.
class PixArtPipeline {
 public:
  PixArtPipeline(std::shared_ptr<models::PixArtTransformer2DModel> transformer,
                 std::shared_ptr<models::AutoencoderKL> vae,
                 nlohmann::json scheduler_config, models::Placement placement);

  // transformer/, vae/ and scheduler/ of a diffusers PixArt folder.
  // With `blocks`, the transformer holds only those blocks (a PipeFusion
  // stage).
  static absl::StatusOr<std::unique_ptr<PixArtPipeline>> Load(
      const std::string& dir, std::shared_ptr<models::Attention> attention,
      const models::Placement& placement,
      std::optional<models::BlockRange> blocks = std::nullopt);

  // Starting latents [B, C, h, w] on the pipeline's device/dtype.
  absl::StatusOr<at::Tensor> InitialLatents(const PixArtRequest& request) const;

  // The denoise loop from `latents`; returns the final latents. `observer`
  // may be empty.
  absl::StatusOr<at::Tensor> Denoise(const PixArtRequest& request,
                                     at::Tensor latents,
                                     const PixArtStepObserver& observer);

  // Decodes `latents`; with `output_size` the decoder output is resized and
  // centre-cropped to it before post-processing, as diffusers does after
  // resolution binning.
  absl::StatusOr<PixArtDecodeOutput> Decode(
      const at::Tensor& latents,
      std::optional<config::ImageSize> output_size = std::nullopt);

  // InitialLatents, Denoise and Decode.
  absl::StatusOr<PixArtDecodeOutput> Generate(
      const PixArtRequest& request, const PixArtStepObserver& observer);

  // A fresh scheduler set to `num_inference_steps` (what Denoise steps
  // through).
  absl::StatusOr<std::unique_ptr<schedulers::Scheduler>> Schedule(
      int num_inference_steps) const;

  models::PixArtTransformer2DModel& transformer() { return *transformer_; }

 private:
  absl::Status CheckRequest(const PixArtRequest& request) const;
  // The model's noise prediction for `latents` at `timestep` (of denoising
  // step `step`), guided when the request asks for it; `raw` receives the
  // transformer output.
  absl::StatusOr<at::Tensor> PredictNoise(const PixArtRequest& request,
                                          const at::Tensor& latents,
                                          const at::Tensor& timestep, int step,
                                          at::Tensor& raw);
  int64_t latent_scale() const { return vae_->config().scale_factor(); }
  c10::TensorOptions options() const;

  std::shared_ptr<models::PixArtTransformer2DModel> transformer_;
  std::shared_ptr<models::AutoencoderKL> vae_;
  nlohmann::json scheduler_config_;
  models::Placement placement_;
};

}  // namespace ditserve::pipelines

#endif  // DITSERVE_CORE_PIPELINES_PIXART_PIXART_PIPELINE_H_
