#ifndef DITSERVE_CORE_MODELS_SD3_SD3_TRANSFORMER_2D_MODEL_H_
#define DITSERVE_CORE_MODELS_SD3_SD3_TRANSFORMER_2D_MODEL_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/models/component_weights.h"
#include "core/models/layers/ada_layer_norm.h"
#include "core/models/layers/timestep_embeddings.h"
#include "core/models/sd3/joint_transformer_block.h"
#include "core/models/sd3/sd3_patch_embed.h"
#include "core/models/sd3/sd3_transformer_config.h"
#include "core/models/sequence_shard.h"
#include "core/parallel/attention.h"

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
  SD3Transformer2DModel(const SD3TransformerConfig& config,
                        std::shared_ptr<parallel::Attention> attention);

  const SD3TransformerConfig& config() const { return config_; }

  // Output [B, out_channels, H, W]. Inputs are checked against the config
  // (INVALID_ARGUMENT naming the input and its shape, or the patch grid and
  // the position table's size); LibTorch errors come back as INTERNAL.
  absl::StatusOr<at::Tensor> Forward(const SD3TransformerInputs& inputs);

  // This rank's part of a sequence-parallel forward over the sequence
  // [image, text] (see SequenceShard). `inputs` are the whole inputs (as for
  // Forward); modulation, norms and MLPs run on the shard's tokens only,
  // each with the weights of its stream, and attention goes through the
  // model's parallel::Attention, which sees the other ranks' shards.
  // Returns [B, shard.tokens, patch_size^2 * out_channels]: the output of
  // the shard's image tokens at their positions and zeros at its text
  // tokens and padding, so that the shards of all ranks concatenate to the
  // padded sequence (the caller gathers them and unpatchifies the image
  // tokens). Errors as Forward, plus INVALID_ARGUMENT for a shard or key
  // mask that does not fit, and the Status of a failed collective.
  absl::StatusOr<at::Tensor> ForwardShard(const SD3TransformerInputs& inputs,
                                          const SequenceShard& shard);

  // Image tokens [B, (H/p)(W/p), p * p * C] -> [B, C, H, W] for a grid of
  // H/p x W/p patches.
  at::Tensor Unpatchify(const at::Tensor& tokens, int64_t grid_height,
                        int64_t grid_width) const;

 private:
  absl::Status CheckInputs(const SD3TransformerInputs& inputs) const;
  at::Tensor ForwardUnchecked(const SD3TransformerInputs& inputs);
  at::Tensor ForwardShardUnchecked(const SD3TransformerInputs& inputs,
                                   const SequenceShard& shard);
  // The blocks and the output layers on `streams`: [B, S_img, p * p * C]
  // for the streams' image tokens.
  at::Tensor ImageTokenOutputs(const SD3TransformerInputs& inputs,
                               SD3Streams streams,
                               const SD3KeyMasks& key_masks);

  SD3TransformerConfig config_;
  SD3PatchEmbed pos_embed_{nullptr};
  CombinedTimestepTextProjEmbeddings time_text_embed_{nullptr};
  torch::nn::Linear context_embedder_{nullptr};
  std::vector<JointTransformerBlock> transformer_blocks_;
  AdaLayerNormContinuous norm_out_{nullptr};
  torch::nn::Linear proj_out_{nullptr};
};

// Builds an SD3Transformer2DModel from a diffusers `transformer/` folder
// (config.json + weights, the position table included) and loads its weights
// strictly.
absl::StatusOr<std::shared_ptr<SD3Transformer2DModel>>
LoadSD3Transformer2DModel(const std::string& component_dir,
                          std::shared_ptr<parallel::Attention> attention,
                          const Placement& placement);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_SD3_SD3_TRANSFORMER_2D_MODEL_H_
