#ifndef DITSERVE_CORE_PIPELINES_FLUX_FLUX_PIPELINE_H_
#define DITSERVE_CORE_PIPELINES_FLUX_FLUX_PIPELINE_H_

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
#include "core/models/flux/flux_transformer_2d_model.h"
#include "core/models/layers/attention.h"
#include "core/models/vae/autoencoder_kl.h"
#include "core/pipelines/decoded_images.h"
#include "core/pipelines/flux/flux_latents.h"
#include "core/pipelines/flux/flux_pipeline_stages.h"
#include "core/pipelines/flux/flux_sequence_parallel.h"
#include "core/schedulers/flow_match_euler.h"

namespace ditserve::pipelines {

// One generation, every value explicit (they come from the frozen
// InputConfig; this pipeline has no defaults of its own).
struct FluxRequest {
  // [B, S_txt, joint_attention_dim]: T5 embeddings, one row per image.
  at::Tensor prompt_embeds;
  // [B, pooled_projection_dim]: pooled CLIP embeddings.
  at::Tensor pooled_prompt_embeds;
  int64_t height = 0;
  int64_t width = 0;
  int num_inference_steps = 0;
  // Goes into the guidance embedding of FLUX.1-dev style models; ignored by
  // models without one (FLUX.1-schnell).
  float guidance_scale = 0.0F;
  // One seed per image (B entries): image i starts from InitialNoise(seed i).
  std::vector<uint64_t> seeds;
};

// What the denoise loop reports after each step.
struct FluxStepEvent {
  int step = 0;
  int num_steps = 0;
  // The step's timestep on the 0..1000 scale (0-dim float32).
  at::Tensor timestep;
  // Raw transformer output of the step, packed like the latents.
  at::Tensor noise_pred;
  // Packed latents after the scheduler step.
  at::Tensor latents;
};

// Called after every step; a non-OK status stops the loop and is returned
// (how cancellation and deadlines end a generation between steps).
using FluxStepObserver = std::function<absl::Status(const FluxStepEvent&)>;

struct FluxDecodeOutput {
  // Latents as handed to the VAE: unpacked, / scaling_factor + shift_factor.
  at::Tensor vae_input;
  DecodedImages images;
};

// diffusers FluxPipeline from prompt embeddings: initial noise per seed,
// 2x2 packing, flow-match Euler denoising (sigmas linspace(1, 1/N, N), mu
// from the image token count), unpack, unscale, VAE decode, RGB. Not
// thread-safe: one generation at a time.
class FluxPipeline {
 public:
  FluxPipeline(std::shared_ptr<models::FluxTransformer2DModel> transformer,
               std::shared_ptr<models::AutoencoderKL> vae,
               schedulers::FlowMatchEulerConfig scheduler_config,
               models::Placement placement);

  // transformer/, vae/ and scheduler/ of a diffusers FLUX folder; of the
  // transformer only `blocks` (a PipeFusion stage's range; nullopt = all).
  static absl::StatusOr<std::unique_ptr<FluxPipeline>> Load(
      const std::string& dir, std::shared_ptr<models::Attention> attention,
      const models::Placement& placement,
      std::optional<models::BlockRange> blocks = std::nullopt);

  // Packed starting latents [B, tokens, 4C] on the pipeline's device/dtype.
  absl::StatusOr<at::Tensor> InitialLatents(const FluxRequest& request) const;

  // The denoise loop from `latents` (from InitialLatents); returns the final
  // packed latents. `observer` may be empty. With `sequence_parallel`, every
  // transformer forward runs on this rank's shard of the joint sequence and
  // is gathered over the sp group (ShardedFluxForward); pass it exactly when
  // the transformer's Attention is a sequence-parallel one, on every rank of
  // the group. With `stages`, every forward runs as a PipeFusion stage of
  // the pp group: whole-sequence (StagedFluxForward) for the warm-up steps,
  // then patch after patch (PatchedFluxForward); pass it exactly when the
  // transformer holds one stage's blocks, on every rank of the group. At
  // most one of the two is given.
  absl::StatusOr<at::Tensor> Denoise(
      const FluxRequest& request, at::Tensor latents,
      const FluxStepObserver& observer,
      const SequenceParallel* sequence_parallel = nullptr,
      const PipeFusionStages* stages = nullptr);

  absl::StatusOr<FluxDecodeOutput> Decode(const at::Tensor& latents,
                                          int64_t height, int64_t width);

  // InitialLatents, Denoise and Decode.
  absl::StatusOr<FluxDecodeOutput> Generate(const FluxRequest& request,
                                            const FluxStepObserver& observer);

  // The scheduler sigmas and timesteps a request of this size and step count
  // uses (what Denoise steps through).
  absl::StatusOr<schedulers::FlowMatchEulerDiscreteScheduler> Schedule(
      int64_t height, int64_t width, int num_inference_steps) const;

  models::FluxTransformer2DModel& transformer() { return *transformer_; }
  models::AutoencoderKL& vae() { return *vae_; }

 private:
  absl::Status CheckRequest(const FluxRequest& request) const;
  int64_t vae_scale_factor() const { return vae_->config().scale_factor(); }
  c10::TensorOptions options() const;

  std::shared_ptr<models::FluxTransformer2DModel> transformer_;
  std::shared_ptr<models::AutoencoderKL> vae_;
  schedulers::FlowMatchEulerConfig scheduler_config_;
  models::Placement placement_;
};

}  // namespace ditserve::pipelines

#endif  // DITSERVE_CORE_PIPELINES_FLUX_FLUX_PIPELINE_H_
