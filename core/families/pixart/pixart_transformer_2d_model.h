#ifndef DITSERVE_CORE_FAMILIES_PIXART_PIXART_TRANSFORMER_2D_MODEL_H_
#define DITSERVE_CORE_FAMILIES_PIXART_PIXART_TRANSFORMER_2D_MODEL_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/families/pixart/pixart_embeddings.h"
#include "core/families/pixart/pixart_transformer_block.h"
#include "core/families/pixart/pixart_transformer_config.h"
#include "core/models/block_range.h"
#include "core/models/component_weights.h"
#include "core/models/layers/attention.h"
#include "core/models/layers/linear.h"
#include "core/models/sequence_shard.h"

namespace ditserve::models {

// The inputs of one forward, as PixArt pipelines pass them to diffusers'
// PixArtTransformer2DModel.
struct PixArtTransformerInputs {
  // [B, in_channels, H, W] latents; H and W multiples of patch_size.
  at::Tensor hidden_states;
  // [B, S_txt, caption_channels] T5 states.
  at::Tensor encoder_hidden_states;
  // [B] timesteps on the 0..999 scale (int64 as the pipelines pass them).
  at::Tensor timestep;
  // [B, S_txt] tokenizer mask, 1 = keep; padded keys get a -10000 bias.
  std::optional<at::Tensor> encoder_attention_mask;
  // Required exactly when config.use_additional_conditions (PixArt-α).
  std::optional<PixArtMicroConditions> micro_conditions;
};

// diffusers PixArtTransformer2DModel (PixArt-α and PixArt-Σ). Submodules
// carry the diffusers attribute names, so checkpoint keys are module paths;
// blocks keep their index in the whole model even when this instance holds
// only a range of them (a PipeFusion stage).
class PixArtTransformer2DModel : public torch::nn::Module {
 public:
  // Holds the blocks `blocks` (every block when unset), which must be a
  // non-empty range inside [0, num_layers) (std::invalid_argument).
  PixArtTransformer2DModel(const PixArtTransformerConfig& config,
                           std::shared_ptr<Attention> attention,
                           std::optional<BlockRange> blocks = std::nullopt);

  const PixArtTransformerConfig& config() const { return config_; }
  BlockRange blocks() const { return blocks_; }

  // Whether a checkpoint tensor belongs to this instance: every non-block
  // tensor, and block tensors inside the range.
  bool HoldsTensor(absl::string_view name) const;

  // Output [B, out_channels, H, W]: with learned sigma, channels
  // [0, in_channels) are the noise prediction. Inputs are checked against the
  // config (INVALID_ARGUMENT naming the input and its shape); LibTorch errors
  // come back as INTERNAL.
  absl::StatusOr<at::Tensor> Forward(const PixArtTransformerInputs& inputs);

  // This rank's part of a sequence-parallel forward over the image tokens
  // (see SequenceShard; the caption is not part of the sequence: every rank
  // cross-attends to all of it). `inputs` are the whole inputs (as for
  // Forward); modulation, norms and MLPs run on the shard's tokens only and
  // self-attention goes through the model's Attention, which sees
  // the other ranks' shards. Returns [B, shard.tokens, patch_size^2 *
  // out_channels]: the output of the shard's image tokens and zeros at its
  // padding, so that the shards of all ranks concatenate to the padded
  // sequence (the caller gathers them and unpatchifies). Errors as Forward,
  // plus INVALID_ARGUMENT for a shard or key mask that does not fit, and the
  // Status of a failed collective.
  absl::StatusOr<at::Tensor> ForwardShard(const PixArtTransformerInputs& inputs,
                                          const SequenceShard& shard);

  // One PipeFusion stage: this instance's blocks on the image tokens
  // `patch` (in row-major token order). The first stage (blocks from 0)
  // embeds `inputs` and takes no `incoming`; a later one continues from
  // `incoming`, the image stream [B, patch.tokens, dim] the previous stage
  // returned. Every stage conditions on `inputs` itself (all stages hold the
  // non-block tensors), so only the image stream travels between stages.
  // Errors as Forward, plus INVALID_ARGUMENT for a patch outside the image
  // or a missing, unexpected or misshapen `incoming`.
  absl::StatusOr<at::Tensor> ForwardStage(
      const PixArtTransformerInputs& inputs, const TokenSpan& patch,
      const std::optional<at::Tensor>& incoming);

  // The last stage's output [B, tokens, p * p * out_channels] from the image
  // stream its ForwardStage returned. FAILED_PRECONDITION unless this
  // instance holds the last block.
  absl::StatusOr<at::Tensor> StageOutput(const PixArtTransformerInputs& inputs,
                                         const at::Tensor& image_stream);

  // Image tokens [B, (H/p)(W/p), p * p * C] -> [B, C, H, W] for a grid of
  // H/p x W/p patches.
  at::Tensor Unpatchify(const at::Tensor& tokens, int64_t grid_height,
                        int64_t grid_width) const;

 private:
  // What every block and the output layers condition on.
  struct Conditioning {
    AdaLayerNormSingleOutput timestep;
    // [B, S_txt, dim] projected caption and its additive key bias.
    at::Tensor context;
    std::optional<at::Tensor> context_bias;
  };

  absl::Status CheckInputs(const PixArtTransformerInputs& inputs) const;
  absl::Status CheckHoldsEveryBlock() const;
  Conditioning Condition(const PixArtTransformerInputs& inputs,
                         c10::ScalarType dtype);
  // This instance's blocks on `hidden` [B, S, dim]; `key_mask` hides padded
  // tokens from self-attention.
  at::Tensor RunBlocks(at::Tensor hidden, const Conditioning& conditioning,
                       const std::optional<at::Tensor>& key_mask);
  // The output layers: [B, S, dim] -> [B, S, p * p * C].
  at::Tensor OutputLayers(const at::Tensor& hidden,
                          const Conditioning& conditioning);
  // The blocks and the output layers on `hidden` [B, S, dim] (embedded
  // image tokens): [B, S, p * p * C].
  at::Tensor TokenOutputs(const PixArtTransformerInputs& inputs,
                          at::Tensor hidden,
                          const std::optional<at::Tensor>& key_mask);

  PixArtTransformerConfig config_;
  BlockRange blocks_;
  PixArtPatchEmbed pos_embed_{nullptr};
  std::vector<PixArtTransformerBlock> transformer_blocks_;
  at::Tensor scale_shift_table_;
  Linear proj_out_{nullptr};
  AdaLayerNormSingle adaln_single_{nullptr};
  PixArtCaptionProjection caption_projection_{nullptr};
};

// Builds a PixArtTransformer2DModel from a diffusers `transformer/` folder
// (config.json + weights) and loads its weights strictly; with `blocks`,
// only those blocks' tensors are read (INVALID_ARGUMENT for a range outside
// the model).
absl::StatusOr<std::shared_ptr<PixArtTransformer2DModel>>
LoadPixArtTransformer2DModel(const std::string& component_dir,
                             std::shared_ptr<Attention> attention,
                             const Placement& placement,
                             std::optional<BlockRange> blocks = std::nullopt);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_FAMILIES_PIXART_PIXART_TRANSFORMER_2D_MODEL_H_
