#ifndef DITSERVE_CORE_FAMILIES_FAMILY_H_
#define DITSERVE_CORE_FAMILIES_FAMILY_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/checkpoints/component_writer.h"
#include "core/config/aspect_ratio_bins.h"
#include "core/config/checkpoint_spec.h"
#include "core/config/model_defaults.h"
#include "core/families/model_dimensions.h"
#include "core/models/block_range.h"
#include "core/models/component_weights.h"
#include "core/models/decoded_images.h"
#include "core/models/layers/attention.h"
#include "core/models/vae/tiled_decode.h"
#include "core/parallel/cfg_split.h"
#include "core/parallel/pipefusion.h"
#include "core/parallel/sequence_parallel.h"
#include "core/schedulers/scheduler.h"
#include "ditserve/v1/input_config.pb.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

// What a model family is to the family-agnostic engine: the interfaces each
// folder core/families/<name>/ implements (see core/families/README.md).
namespace ditserve::families {

// The text conditioning of a batch of prompts, one row per image. What each
// tensor holds is the family's; a family leaves undefined what it does not
// use.
struct Conditioning {
  // [B, S_txt, width]: the text states the transformer attends to.
  at::Tensor states;
  // [B, width]: pooled text embeddings (FLUX, SD3).
  at::Tensor pooled;
  // [B, S_txt]: 1 = token, 0 = padding (PixArt).
  at::Tensor mask;
  // The token ids each text encoder was fed, by output name
  // ("t5_input_ids"), for golden checks; the transformer does not use them.
  std::vector<std::pair<std::string, at::Tensor>> token_ids;
};

// The rows of `first` followed by those of `second`, tensor by tensor: the
// batch [negative, positive] that classifier-free guidance on one rank runs
// the transformer on.
Conditioning ConcatBatches(const Conditioning& first,
                           const Conditioning& second);

// How a family turns guidance_scale into guidance.
enum class GuidanceRule {
  // Conditional and unconditional branches combined as
  // negative + scale × (positive − negative), when guidance_scale > 1.
  kClassifierFree,
  // guidance_scale goes into the transformer (FLUX.1-dev's guidance
  // embedding; a model without one ignores it).
  kEmbedded,
};

// One generation on one rank, every value explicit (they come from the
// frozen InputConfig; families hold no request defaults).
struct GenerationRequest {
  Conditioning prompt;
  // Required with classifier-free guidance (guidance_scale > 1), ignored
  // otherwise.
  Conditioning negative_prompt;
  // Pixels generated (PixArt with resolution binning: the bin).
  int64_t height = 0;
  int64_t width = 0;
  // Frames generated: 1 for an image.
  int64_t frames = 1;
  int num_inference_steps = 0;
  float guidance_scale = 0.0F;
  // diffusers' use_dynamic_cfg: classifier-free guidance at a scale that
  // follows the step's timestep (see InputConfig.use_dynamic_cfg).
  bool dynamic_cfg = false;
  // One seed per image (B entries): image i starts from InitialNoise(seed i).
  std::vector<uint64_t> seeds;
  // A scheduler that draws noise every step (Scheduler::draws_noise) draws
  // image i's from a generator seeded with step_noise_seeds[i]. Empty: from
  // image i's seed, continued after its initial noise, as diffusers'
  // pipelines continue their generator after drawing the latents.
  std::vector<uint64_t> step_noise_seeds;
  // With classifier-free guidance: run only this rank's branch and exchange
  // the outputs (CFG parallel). Unset: both branches in one batch.
  std::optional<parallel::CfgSplit> cfg_split;
  // Every transformer forward on this rank's shard of the sequence, gathered
  // over the sp group. Unset: the whole sequence.
  std::optional<parallel::SequenceParallel> sequence_parallel;
  // Every transformer forward through this rank's PipeFusion stage (the
  // transformer holds the stage's blocks). At most one of sequence_parallel
  // and stages.
  std::optional<parallel::PipeFusionStages> stages;

  int64_t batch() const { return static_cast<int64_t>(seeds.size()); }
};

// One transformer forward with its inputs bound, in the three ways a rank
// runs it. Each returns the output for the latents in their packed layout
// (the transformer's raw output: with learned sigma, every channel).
class BoundForward {
 public:
  virtual ~BoundForward() = default;
  // The whole sequence on this rank.
  virtual absl::StatusOr<at::Tensor> Whole() = 0;
  // This rank's shard of the attention sequence, the outputs all-gathered
  // over the sp group (the transformer attends through a sequence-parallel
  // Attention).
  virtual absl::StatusOr<at::Tensor> Sharded(
      const parallel::SequenceParallel& sequence_parallel) = 0;
  // Through this rank's PipeFusion stage at denoising step `step`: the whole
  // sequence stage after stage in warm-up steps, the patch pipeline after
  // them.
  virtual absl::StatusOr<at::Tensor> Staged(
      const parallel::PipeFusionStages& stages, int step) = 0;
};

// The output Decode makes of a request's latents, and how.
struct DecodeRequest {
  int64_t height = 0;
  int64_t width = 0;
  // Frames of a video (1 for an image): the padding latent frames in front
  // of those a video of this many frames decodes from are dropped.
  int64_t frames = 1;
  // diffusers' enable_tiling() (InputConfig.vae_tiling).
  bool vae_tiling = false;
};

struct DecodeOutput {
  // The latents as handed to the VAE (unscaled, shifted).
  at::Tensor vae_input;
  models::DecodedImages images;
};

// A family's components loaded on one rank: prompt encoders, this rank's
// transformer (or PipeFusion stage of it), VAE and scheduler config. The
// engine's denoise loop drives it; it never calls a collective itself. Not
// thread-safe: one generation at a time.
class FamilyModel {
 public:
  virtual ~FamilyModel() = default;

  virtual GuidanceRule guidance_rule() const = 0;

  // `prompts` → their conditioning, padded or cut to `max_sequence_length`
  // text tokens (as the family's diffusers pipeline counts them).
  virtual absl::StatusOr<Conditioning> EncodePrompts(
      const std::vector<std::string>& prompts, int max_sequence_length) = 0;

  // INVALID_ARGUMENT naming what of `request` this model cannot run: its
  // size off the latent grid, conditioning of the wrong shape.
  virtual absl::Status CheckRequest(const GenerationRequest& request) const = 0;

  // A fresh scheduler set to the request's steps (and size, where the shift
  // depends on it).
  virtual absl::StatusOr<std::unique_ptr<schedulers::Scheduler>> Schedule(
      const GenerationRequest& request) const = 0;

  // The seeded noise of one image in the order the family's diffusers
  // pipeline draws it: [1, C, h, w] (CogVideoX: [1, F, C, h, w]).
  virtual std::vector<int64_t> NoiseShape(
      const GenerationRequest& request) const = 0;
  // Noise [B, ...NoiseShape] → the latent layout the transformer and the
  // scheduler work on (FLUX: 2×2-packed tokens), on the model's device and
  // dtype; UnpackLatents is the inverse.
  virtual at::Tensor PackLatents(const at::Tensor& noise) const = 0;
  virtual at::Tensor UnpackLatents(const at::Tensor& packed,
                                   const GenerationRequest& request) const = 0;
  // The shape of the request's packed latents, batch included.
  virtual std::vector<int64_t> LatentsShape(
      const GenerationRequest& request) const = 0;

  // The forward at `timestep` (the scheduler's, one 0-dim tensor) over
  // packed `latents` [B', ...] conditioned on `text` (B' rows: the request's
  // batch, or twice it for both guidance branches).
  virtual absl::StatusOr<std::unique_ptr<BoundForward>> BindForward(
      const GenerationRequest& request, const at::Tensor& latents,
      const at::Tensor& timestep, const Conditioning& text) = 0;

  // Tables the family derives from the request's size alone, by the names
  // diffusers' pipeline golden cases store them under (CogVideoX's
  // "rotary_cos", "rotary_sin"), for golden checks; none by default.
  virtual absl::StatusOr<std::vector<std::pair<std::string, at::Tensor>>>
  RequestTables(const GenerationRequest& /*request*/) const {
    return std::vector<std::pair<std::string, at::Tensor>>{};
  }

  // The noise prediction in a (guided) transformer output: all of it, or
  // PixArt's learned-sigma half.
  virtual at::Tensor NoiseOf(const at::Tensor& output) const { return output; }

  // Whether the transformer's output is upcast to float32 before guidance,
  // so that guidance and the scheduler's step run in float32 (diffusers'
  // CogVideoX pipelines: noise_pred.float()); the image pipelines guide in
  // the model's dtype.
  virtual bool guides_in_float32() const { return false; }

  // Whether a one-step generation keeps the scheduler's predicted clean
  // sample rather than its previous sample (PixArt-α's DMD distillation).
  virtual bool one_step_takes_clean_sample() const { return false; }

  // Unpacked latents [B, ...DerivedShapes.image_latent_shape] → images at
  // `output`'s size (PixArt after resolution binning: resized and
  // centre-cropped to it; other families generate that size); a video's
  // frames are DecodedImages::rgb [B, frames, H, W, 3].
  virtual absl::StatusOr<DecodeOutput> Decode(const at::Tensor& latents,
                                              const DecodeRequest& output) = 0;

  virtual ModelDimensions dimensions() const = 0;
  // This rank's transformer (its stage's blocks under PipeFusion) and the
  // blocks of the whole model, for the start-up log.
  virtual torch::nn::Module& transformer() = 0;
  virtual int64_t total_blocks() const = 0;
};

// How a rank's transformer is built.
struct LoadOptions {
  std::shared_ptr<models::Attention> attention;
  models::Placement placement;
  // Unset: every block; else a PipeFusion stage's.
  std::optional<models::BlockRange> blocks;
  // False: no tokenizers or text encoders (a folder without them, run from
  // prompt embeddings); EncodePrompts is then FAILED_PRECONDITION.
  bool prompt_encoders = true;
};

// FAILED_PRECONDITION for EncodePrompts of a model loaded without its prompt
// encoders.
absl::Status NoPromptEncoders();

// Detect's part for the VAE's tiled decode: `tiles` (the family's VAE
// geometry) into spec.vae_tile_height / vae_tile_width, or why there are
// none into spec.vae_tiling_refusal.
void SetVaeTiles(const absl::StatusOr<models::DecodeTiles>& tiles,
                 int64_t scale_factor, config::ModelSpec& spec);

// A model family as the registry holds it.
class Family {
 public:
  virtual ~Family() = default;
  // The defaults rows of the models this folder serves (flux-dev and
  // flux-schnell, ...).
  virtual std::vector<config::ModelDefaults> serves() const = 0;
  // The diffusers pipeline classes (model_index.json "_class_name") it runs.
  virtual std::vector<std::string> pipeline_classes() const = 0;
  // The spec of a checkpoint folder of one of pipeline_classes(): which of
  // serves() it is, and the dimensions the family counts its own way.
  virtual absl::StatusOr<config::ModelSpec> Detect(
      const config::CheckpointConfigs& configs) const = 0;
  // The blocks PipeFusion stage `stage` of `stages` holds, from the
  // checkpoint folder's transformer config.
  virtual absl::StatusOr<models::BlockRange> StageBlocks(
      const std::string& model_dir, int stage, int stages) const = 0;
  // What the frozen `config` adds to rank 0's resident memory at its peak
  // on a model of `spec`, above the loaded model: the estimate admission
  // holds against --max_request_bytes. Errs high (request_memory.h).
  virtual int64_t RequestBytes(const v1::InputConfig& config,
                               const config::ModelSpec& spec) const = 0;
  // The components of the diffusers folder `model_dir` for one rank.
  virtual absl::StatusOr<std::unique_ptr<FamilyModel>> Load(
      const std::string& model_dir, const LoadOptions& options) const = 0;
  // A diffusers folder of `model` (one of serves()) with random weights of
  // `preset`'s size and trained tokenizers: the built-in demo model and the
  // models of the tests and benchmarks.
  virtual absl::Status WriteRandomCheckpoint(
      const config::ModelDefaults& model, checkpoints::CheckpointPreset preset,
      uint64_t seed, const std::string& out_dir) const = 0;
};

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_FAMILY_H_
