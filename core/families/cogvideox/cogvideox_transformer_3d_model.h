#ifndef DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_TRANSFORMER_3D_MODEL_H_
#define DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_TRANSFORMER_3D_MODEL_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/families/cogvideox/cogvideox_block.h"
#include "core/families/cogvideox/cogvideox_positions.h"
#include "core/families/cogvideox/cogvideox_transformer_config.h"
#include "core/models/block_range.h"
#include "core/models/component_weights.h"
#include "core/models/kept_for_key.h"
#include "core/models/layers/attention.h"
#include "core/models/layers/conv.h"
#include "core/models/layers/linear.h"
#include "core/models/layers/timestep_embeddings.h"
#include "core/models/sequence_shard.h"

namespace ditserve::families {

// The inputs of one forward, as CogVideoXPipeline passes them.
struct CogVideoXTransformerInputs {
  // [B, F, C, H, W] latents, frames before channels.
  at::Tensor hidden_states;
  // [B, S_txt, text_embed_dim] T5 states.
  at::Tensor encoder_hidden_states;
  // [B] int64 on 0..999 (the scheduler's timestep for every sample).
  at::Tensor timestep;
};

// What one PipeFusion stage hands the next: the text tokens and the video
// tokens of a patch, [B, tokens, inner_dim] each.
struct CogVideoXStreams {
  at::Tensor text;
  at::Tensor video;
};

// diffusers CogVideoXPatchEmbed: text_proj for the T5 states; proj embeds
// the video as a Conv2d on every frame (1.0) or a Linear over
// patch_size_t x patch_size x patch_size patches (1.5), and the 2b model
// adds its sincos positions (`sincos`, undefined for the other models).
// Returns the joint sequence [text | video].
class CogVideoXPatchEmbedImpl : public torch::nn::Module {
 public:
  explicit CogVideoXPatchEmbedImpl(const CogVideoXTransformerConfig& config);

  at::Tensor Forward(const at::Tensor& text, const at::Tensor& video,
                     const at::Tensor& sincos);

 private:
  at::Tensor EmbedVideo(const at::Tensor& video);

  CogVideoXTransformerConfig config_;
  models::Conv2d frame_proj_{nullptr};
  models::Linear patch_proj_{nullptr};
  models::Linear text_proj_{nullptr};
};
TORCH_MODULE(CogVideoXPatchEmbed);

// diffusers AdaLayerNorm(chunk_dim=1) as CogVideoX's norm_out: an affine
// LayerNorm modulated by (shift, scale) = Linear(SiLU(temb)), shift first.
class CogVideoXOutputNormImpl : public torch::nn::Module {
 public:
  CogVideoXOutputNormImpl(int64_t conditioning_dim, int64_t dim, double eps);

  at::Tensor Forward(const at::Tensor& x, const at::Tensor& temb);

 private:
  models::Linear linear_;
  torch::nn::LayerNorm norm_;
};
TORCH_MODULE(CogVideoXOutputNorm);

// diffusers CogVideoXTransformer3DModel for text to video (2b, 5b, 1.5).
// Submodules carry the diffusers attribute names, so checkpoint keys are
// module paths.
class CogVideoXTransformer3DModel : public torch::nn::Module {
 public:
  // Holds the blocks `blocks` (every block when unset), a non-empty range
  // inside [0, num_layers) (std::invalid_argument otherwise).
  CogVideoXTransformer3DModel(
      const CogVideoXTransformerConfig& config,
      std::shared_ptr<models::Attention> attention,
      std::optional<models::BlockRange> blocks = std::nullopt);

  const CogVideoXTransformerConfig& config() const { return config_; }
  models::BlockRange blocks() const { return blocks_; }
  // Every non-block tensor, and block tensors inside the range.
  bool HoldsTensor(absl::string_view name) const;

  // Output [B, F, out_channels, H, W]. INVALID_ARGUMENT naming the input and
  // the shape it needs (frames and sides that do not divide into patches;
  // 2b: text of other than max_text_seq_length tokens); LibTorch errors come
  // back as INTERNAL.
  absl::StatusOr<at::Tensor> Forward(const CogVideoXTransformerInputs& inputs);

  // This rank's part of a sequence-parallel forward over the joint sequence
  // [text | video] (see models::SequenceShard; padding follows the video).
  // `inputs` are the whole inputs, as for Forward; norms, modulation and
  // MLPs run on the shard's tokens only, each with its stream's
  // modulation, and attention goes through the model's Attention, which
  // sees the other ranks' shards. Returns [B, shard.tokens,
  // token_output_channels]: the output of the shard's video tokens at their
  // positions and zeros at its text tokens and padding, so that the shards
  // of all ranks concatenate to the padded sequence (Unpatchify takes the
  // video part of it). Errors as Forward, plus INVALID_ARGUMENT for a shard
  // or key mask that does not fit, and the Status of a failed collective.
  absl::StatusOr<at::Tensor> ForwardShard(
      const CogVideoXTransformerInputs& inputs,
      const models::SequenceShard& shard);

  // PipeFusion: this stage's blocks over the video tokens `patch` (in token
  // order), with the whole text when `with_text` (else none of it), [text |
  // patch] being the rows the stage's attention computes. The first stage
  // (blocks from 0) embeds `inputs` and takes no `incoming`; a later stage
  // continues from the previous stage's streams ([B, 0, dim] for a stream
  // without tokens). Errors as Forward, plus INVALID_ARGUMENT for a patch or
  // incoming streams that do not fit (see models::CheckStageArguments).
  absl::StatusOr<CogVideoXStreams> ForwardStage(
      const CogVideoXTransformerInputs& inputs, const models::TokenSpan& patch,
      bool with_text, const std::optional<CogVideoXStreams>& incoming);

  // The last stage's output [B, tokens, token_output_channels] for the video
  // stream its ForwardStage returned; FAILED_PRECONDITION on another stage.
  absl::StatusOr<at::Tensor> StageOutput(
      const CogVideoXTransformerInputs& inputs, const at::Tensor& video_stream);

  // The positions of `grid`'s video tokens on `device`. The last ones are
  // kept and made again only for another grid or device: a video's steps and
  // PipeFusion's patches share them, and RoPE tables made on the host in
  // every forward were copied to a GPU in every block, each copy waiting for
  // the GPU. INVALID_ARGUMENT as RotaryVideoPositions, LibTorch errors as
  // INTERNAL.
  absl::StatusOr<VideoPositions> PositionsOn(const VideoTokenGrid& grid,
                                             at::Device device);

  // Video tokens [B, tokens, token_output_channels] -> [B, F, C, H, W].
  at::Tensor Unpatchify(const at::Tensor& tokens,
                        const VideoTokenGrid& grid) const;

 private:
  // What the whole and the sharded forward share before the blocks: the
  // time embedding and the joint sequence with its RoPE tables.
  struct Embedded {
    at::Tensor temb;
    JointTokens tokens;
    std::optional<models::RotaryTables> rotary;
  };
  at::Tensor TimeEmbedding(const CogVideoXTransformerInputs& inputs);
  Embedded Embed(const CogVideoXTransformerInputs& inputs,
                 const VideoPositions& positions);
  JointTokens RunBlocks(JointTokens x, const Embedded& embedded,
                        const std::optional<at::Tensor>& key_mask);
  // norm_final, norm_out and proj_out on video tokens.
  at::Tensor VideoOutput(const at::Tensor& video_tokens,
                         const at::Tensor& temb);
  absl::StatusOr<VideoTokenGrid> CheckInputs(
      const CogVideoXTransformerInputs& inputs) const;
  at::Tensor ForwardShardUnchecked(const Embedded& embedded,
                                   const models::SequenceShard& shard);

  CogVideoXTransformerConfig config_;
  models::BlockRange blocks_;
  CogVideoXPatchEmbed patch_embed_{nullptr};
  models::TimestepEmbedding time_embedding_{nullptr};
  std::vector<CogVideoXBlock> transformer_blocks_;
  torch::nn::LayerNorm norm_final_{nullptr};
  CogVideoXOutputNorm norm_out_{nullptr};
  models::Linear proj_out_{nullptr};
  // Keyed by the grid's frames, height and width, and the device.
  models::KeptForKey<std::tuple<int64_t, int64_t, int64_t, at::Device>,
                     VideoPositions>
      positions_;
};

// Builds a CogVideoXTransformer3DModel from a diffusers `transformer/`
// folder (config.json + weights) and loads its weights strictly; with
// `blocks`, only those blocks are built and read.
absl::StatusOr<std::shared_ptr<CogVideoXTransformer3DModel>>
LoadCogVideoXTransformer3DModel(
    const std::string& component_dir,
    std::shared_ptr<models::Attention> attention,
    const models::Placement& placement,
    std::optional<models::BlockRange> blocks = std::nullopt);

}  // namespace ditserve::families

#endif  // DITSERVE_CORE_FAMILIES_COGVIDEOX_COGVIDEOX_TRANSFORMER_3D_MODEL_H_
