#ifndef DITSERVE_CORE_FAMILIES_SD3_SD3_TRANSFORMER_2D_MODEL_H_
#define DITSERVE_CORE_FAMILIES_SD3_SD3_TRANSFORMER_2D_MODEL_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/families/sd3/joint_transformer_block.h"
#include "core/families/sd3/sd3_patch_embed.h"
#include "core/families/sd3/sd3_transformer_config.h"
#include "core/models/block_range.h"
#include "core/models/component_weights.h"
#include "core/models/layers/ada_layer_norm.h"
#include "core/models/layers/attention.h"
#include "core/models/layers/linear.h"
#include "core/models/layers/timestep_embeddings.h"
#include "core/models/sequence_shard.h"

namespace ditserve::models {

// The inputs of one forward, as StableDiffusion3Pipeline passes them.
struct SD3TransformerInputs {
  // [B, in_channels, H, W] latents; H and W multiples of patch_size.
  at::Tensor hidden_states;
  // [B, S_txt, joint_attention_dim]: CLIP (zero-padded) and T5 states.
  at::Tensor encoder_hidden_states;
  // [B, pooled_projection_dim]: both pooled CLIP projections.
  at::Tensor pooled_projections;
  // [B] on the 0..1000 scale (the scheduler's timesteps).
  at::Tensor timestep;
};

// diffusers SD3Transformer2DModel (SD3-medium, SD3.5 with qk_norm and dual
// attention). Submodules carry the diffusers attribute names, so checkpoint
// keys are module paths.
class SD3Transformer2DModel : public torch::nn::Module {
 public:
  // Holds the blocks `blocks` (every block when unset), which must be a
  // non-empty range inside [0, num_layers) (std::invalid_argument); blocks
  // keep their index in the whole model.
  SD3Transformer2DModel(const SD3TransformerConfig& config,
                        std::shared_ptr<Attention> attention,
                        std::optional<BlockRange> blocks = std::nullopt);

  const SD3TransformerConfig& config() const { return config_; }
  BlockRange blocks() const { return blocks_; }

  // Whether a checkpoint tensor belongs to this instance: every non-block
  // tensor, and block tensors inside the range.
  bool HoldsTensor(absl::string_view name) const;

  // PipeFusion stage `stage` of `stages` over the blocks of `config`, split
  // by weight (a joint block with 36 units of inner_dim², the last,
  // context_pre_only one with 23, 7 more for dual attention).
  static BlockRange StageBlocks(const SD3TransformerConfig& config, int stage,
                                int stages);

  // Output [B, out_channels, H, W]. Inputs are checked against the config
  // (INVALID_ARGUMENT naming the input and its shape, or the patch grid and
  // the position table's size); LibTorch errors come back as INTERNAL.
  absl::StatusOr<at::Tensor> Forward(const SD3TransformerInputs& inputs);

  // This rank's part of a sequence-parallel forward over the sequence
  // [image, text] (see SequenceShard). `inputs` are the whole inputs (as for
  // Forward); modulation, norms and MLPs run on the shard's tokens only,
  // each with the weights of its stream, and attention goes through the
  // model's Attention, which sees the other ranks' shards.
  // Returns [B, shard.tokens, patch_size^2 * out_channels]: the output of
  // the shard's image tokens at their positions and zeros at its text
  // tokens and padding, so that the shards of all ranks concatenate to the
  // padded sequence (the caller gathers them and unpatchifies the image
  // tokens). Errors as Forward, plus INVALID_ARGUMENT for a shard or key
  // mask that does not fit, and the Status of a failed collective.
  absl::StatusOr<at::Tensor> ForwardShard(const SD3TransformerInputs& inputs,
                                          const SequenceShard& shard);

  // One PipeFusion stage: this instance's blocks on the image tokens
  // `patch` (row-major token order) and the whole text. The first stage
  // (blocks from 0) embeds `inputs` and takes no `incoming`; a later one
  // continues from `incoming`, the streams the previous stage returned
  // ([B, patch.tokens, dim] image, [B, S_txt, dim] text). Every stage
  // conditions on `inputs` itself, so only the streams travel. The text
  // stream is undefined after the last block (context_pre_only). Errors as
  // Forward, plus INVALID_ARGUMENT for a patch outside the image or a
  // missing, unexpected or misshapen `incoming`.
  absl::StatusOr<SD3Streams> ForwardStage(
      const SD3TransformerInputs& inputs, const TokenSpan& patch,
      const std::optional<SD3Streams>& incoming);

  // The last stage's output [B, tokens, p * p * out_channels] from the
  // image stream its ForwardStage returned. FAILED_PRECONDITION unless this
  // instance holds the last block.
  absl::StatusOr<at::Tensor> StageOutput(const SD3TransformerInputs& inputs,
                                         const at::Tensor& image_stream);

  // Image tokens [B, (H/p)(W/p), p * p * C] -> [B, C, H, W] for a grid of
  // H/p x W/p patches.
  at::Tensor Unpatchify(const at::Tensor& tokens, int64_t grid_height,
                        int64_t grid_width) const;

 private:
  absl::Status CheckInputs(const SD3TransformerInputs& inputs) const;
  absl::Status CheckHoldsEveryBlock() const;
  absl::Status CheckStage(const SD3TransformerInputs& inputs,
                          const TokenSpan& patch,
                          const std::optional<SD3Streams>& incoming) const;
  // From inputs.timestep in its own dtype: bfloat16 would move a timestep
  // of 987 to 988 before the sinusoidal features.
  at::Tensor TimestepEmbedding(const SD3TransformerInputs& inputs);
  // This instance's blocks on `streams`.
  SD3Streams RunBlocks(SD3Streams streams, const at::Tensor& temb,
                       const SD3KeyMasks& key_masks);
  at::Tensor ForwardUnchecked(const SD3TransformerInputs& inputs);
  at::Tensor ForwardShardUnchecked(const SD3TransformerInputs& inputs,
                                   const SequenceShard& shard);
  // The blocks and the output layers on `streams`: [B, S_img, p * p * C]
  // for the streams' image tokens.
  at::Tensor ImageTokenOutputs(const SD3TransformerInputs& inputs,
                               SD3Streams streams,
                               const SD3KeyMasks& key_masks);

  SD3TransformerConfig config_;
  BlockRange blocks_;
  SD3PatchEmbed pos_embed_{nullptr};
  CombinedTimestepTextProjEmbeddings time_text_embed_{nullptr};
  Linear context_embedder_{nullptr};
  std::vector<JointTransformerBlock> transformer_blocks_;
  AdaLayerNormContinuous norm_out_{nullptr};
  Linear proj_out_{nullptr};
};

// Builds an SD3Transformer2DModel from a diffusers `transformer/` folder
// (config.json + weights, the position table included) and loads its weights
// strictly; with `blocks`, only those blocks are built and read
// (INVALID_ARGUMENT for a range outside the model).
absl::StatusOr<std::shared_ptr<SD3Transformer2DModel>>
LoadSD3Transformer2DModel(const std::string& component_dir,
                          std::shared_ptr<Attention> attention,
                          const Placement& placement,
                          std::optional<BlockRange> blocks = std::nullopt);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_FAMILIES_SD3_SD3_TRANSFORMER_2D_MODEL_H_
