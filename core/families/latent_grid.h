#ifndef DITSERVE_CORE_FAMILIES_LATENT_GRID_H_
#define DITSERVE_CORE_FAMILIES_LATENT_GRID_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/families/family.h"
#include "core/models/vae/autoencoder_kl.h"
#include "core/parallel/sequence_parallel.h"
#include "nlohmann/json.hpp"

// What the families over a VAE latent grid share: the latent noise shape,
// the size rule, the conditioning checks and the VAE decode.
namespace ditserve::families {

// [1, latent_channels, height / scale, width / scale] of `request`.
std::vector<int64_t> LatentNoiseShape(const GenerationRequest& request,
                                      const models::AutoencoderKL& vae);

// INVALID_ARGUMENT unless the request's height and width are positive
// multiples of the VAE scale times `patch_size`, naming the multiple.
absl::Status CheckLatentGridSize(const GenerationRequest& request,
                                 const models::AutoencoderKL& vae,
                                 int64_t patch_size);

// The widths a family's conditioning has; 0 = the family leaves the tensor
// undefined.
struct ConditioningWidths {
  int64_t states = 0;
  int64_t pooled = 0;
  bool mask = false;
};

// INVALID_ARGUMENT naming the tensor when the prompt's conditioning (and
// with classifier-free guidance the negative prompt's, which must have the
// prompt's text length) does not have `widths` and one row per seed.
absl::Status CheckConditioning(const GenerationRequest& request,
                               GuidanceRule rule,
                               const ConditioningWidths& widths);

// The VAE (vae/) and the scheduler config (scheduler/scheduler_config.json)
// of a diffusers folder.
struct VaeAndScheduler {
  std::shared_ptr<models::AutoencoderKL> vae;
  nlohmann::json scheduler_json;
  // Where scheduler_json was read, for error messages.
  std::string scheduler_path;
};
absl::StatusOr<VaeAndScheduler> LoadVaeAndScheduler(
    const std::string& model_dir, const models::Placement& placement);

// `latents` [B, C, h, w] / scaling_factor + shift_factor through the VAE
// (in tiles with `vae_tiling`), post-processed.
absl::StatusOr<DecodeOutput> DecodeLatents(models::AutoencoderKL& vae,
                                           const at::Tensor& latents,
                                           bool vae_tiling);

// Detect's SetVaeTiles for a checkpoint whose VAE is an AutoencoderKL.
absl::Status DetectAutoencoderKLTiles(const config::CheckpointConfigs& configs,
                                      config::ModelSpec& spec);

// Detect's ModelSpec::check_steps: whether the scheduler `make_scheduler`
// builds from the checkpoint's scheduler config (as the ranks build it) takes
// a step count. Left unset for a checkpoint without one.
template <typename MakeScheduler>
void DetectStepCheck(const config::CheckpointConfigs& configs,
                     MakeScheduler make_scheduler, config::ModelSpec& spec) {
  if (configs.scheduler.is_null()) return;
  spec.check_steps = [make_scheduler, json = configs.scheduler,
                      path = configs.scheduler_path](int steps) {
    auto scheduler = make_scheduler(json, path);
    return scheduler.ok() ? (*scheduler)->SetTimesteps(steps)
                          : scheduler.status();
  };
}

// Family::RequestBytes of a family over an AutoencoderKL's latent grid: one
// transformer forward or one image's decode (its mid-block attention and its
// full-resolution level), whichever is larger (the forwards end before the
// decode starts) or both with partial_image_steps (a preview decodes while
// the forwards go on), and the outputs.
int64_t LatentGridRequestBytes(const v1::InputConfig& config,
                               const config::ModelSpec& spec);

// The members and the latent-grid parts of a FamilyModel whose components
// are a prompt encoder, a transformer, an AutoencoderKL and a scheduler
// config: noise of LatentNoiseShape, latents the transformer takes as they
// are (a family that packs them overrides PackLatents, UnpackLatents and
// LatentsShape), the
// VAE decode at the generated size.
template <typename Encoder, typename Transformer, typename SchedulerConfig>
class LatentGridModel : public FamilyModel {
 public:
  // `encoder` may be null (loaded without prompt encoders).
  LatentGridModel(std::unique_ptr<Encoder> encoder,
                  std::shared_ptr<Transformer> transformer,
                  std::shared_ptr<models::AutoencoderKL> vae,
                  SchedulerConfig scheduler_config, models::Placement placement)
      : encoder_(std::move(encoder)),
        transformer_(std::move(transformer)),
        vae_(std::move(vae)),
        scheduler_config_(std::move(scheduler_config)),
        placement_(placement) {}

  std::vector<int64_t> NoiseShape(
      const GenerationRequest& request) const override {
    return LatentNoiseShape(request, *vae_);
  }
  at::Tensor PackLatents(const at::Tensor& noise) const override {
    return noise.to(options());
  }
  at::Tensor UnpackLatents(
      const at::Tensor& packed,
      const GenerationRequest& /*request*/) const override {
    return packed;
  }
  std::vector<int64_t> LatentsShape(
      const GenerationRequest& request) const override {
    std::vector<int64_t> shape = LatentNoiseShape(request, *vae_);
    shape[0] = request.batch();
    return shape;
  }
  absl::StatusOr<DecodeOutput> Decode(const at::Tensor& latents,
                                      const DecodeRequest& output) override {
    return DecodeLatents(*vae_, latents, output.vae_tiling);
  }
  torch::nn::Module& transformer() override { return *transformer_; }

 protected:
  // The encoder, or FAILED_PRECONDITION when loaded without it.
  absl::StatusOr<Encoder*> encoder() const {
    if (encoder_ == nullptr) return NoPromptEncoders();
    return encoder_.get();
  }
  Transformer& model() const { return *transformer_; }
  models::AutoencoderKL& vae() const { return *vae_; }
  const SchedulerConfig& scheduler_config() const { return scheduler_config_; }
  const models::Placement& placement() const { return placement_; }
  c10::TensorOptions options() const {
    return c10::TensorOptions()
        .device(placement_.device)
        .dtype(placement_.dtype);
  }

 private:
  std::unique_ptr<Encoder> encoder_;
  std::shared_ptr<Transformer> transformer_;
  std::shared_ptr<models::AutoencoderKL> vae_;
  SchedulerConfig scheduler_config_;
  models::Placement placement_;
};

// A BoundForward of a transformer over latents [B, C, H, W] cut into
// patch_size × patch_size tokens (PixArt, SD3). `Transformer` has Forward,
// ForwardShard, config().patch_size and Unpatchify (see
// parallel::ShardedLatentForward); `StageModel` is the family's
// parallel::LatentStageModel. `trailing_tokens`: the attention-sequence
// tokens after the image tokens (SD3's text; 0 for PixArt).
template <typename Transformer, typename Inputs, typename StageModel>
class LatentGridForward final : public BoundForward {
 public:
  LatentGridForward(Transformer& transformer, Inputs inputs,
                    int64_t trailing_tokens)
      : transformer_(transformer),
        inputs_(std::move(inputs)),
        trailing_tokens_(trailing_tokens) {}

  absl::StatusOr<at::Tensor> Whole() override {
    return transformer_.Forward(inputs_);
  }
  absl::StatusOr<at::Tensor> Sharded(
      const parallel::SequenceParallel& sequence_parallel) override {
    return parallel::ShardedLatentForward(transformer_, inputs_,
                                          sequence_parallel, trailing_tokens_);
  }
  absl::StatusOr<at::Tensor> Staged(const parallel::PipeFusionStages& stages,
                                    int step) override {
    return StageModel(transformer_, inputs_).Run(stages, step);
  }

 private:
  Transformer& transformer_;
  Inputs inputs_;
  int64_t trailing_tokens_;
};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_LATENT_GRID_H_
