#ifndef DITSERVE_CORE_FAMILIES_FLUX_FLUX_TRANSFORMER_2D_MODEL_H_
#define DITSERVE_CORE_FAMILIES_FLUX_FLUX_TRANSFORMER_2D_MODEL_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/families/flux/flux_transformer_block.h"
#include "core/families/flux/flux_transformer_config.h"
#include "core/models/block_range.h"
#include "core/models/layers/ada_layer_norm.h"
#include "core/models/layers/attention.h"
#include "core/models/layers/linear.h"
#include "core/models/layers/timestep_embeddings.h"
#include "core/models/sequence_shard.h"

namespace ditserve::models {

// FLUX's blocks in execution order, as a BlockRange numbers them:
// double-stream blocks are 0 .. num_layers - 1, single-stream blocks follow.
// PipeFusion stage `stage` of `stages` (0 <= stage < stages <=
// total_blocks), split by the work per token, since the slowest stage paces
// the patch pipeline: a double-stream block sends each token through its
// stream's Q/K/V/out and feed-forward (12 inner_dim² per token), a
// single-stream block through Q/K/V, the MLP input and the output projection
// (also 12), both with one attention. So the stages get equal block counts,
// as xDiT splits them; the first stages hold more of the weights (a
// double-stream block has 2.4 times a single-stream one's).
BlockRange FluxStageBlocks(const FluxTransformerConfig& config, int stage,
                           int stages);

// The inputs of one forward, as diffusers' FluxTransformer2DModel takes them.
struct FluxTransformerInputs {
  // [B, S_img, in_channels]: 2x2-packed latents.
  at::Tensor hidden_states;
  // [B, S_txt, joint_attention_dim]: T5 embeddings.
  at::Tensor encoder_hidden_states;
  // [B, pooled_projection_dim]: pooled CLIP embedding.
  at::Tensor pooled_projections;
  // [B]: t / 1000 (the model scales it back by 1000).
  at::Tensor timestep;
  // [S_img, n_axes] and [S_txt, n_axes] RoPE position ids.
  at::Tensor img_ids;
  at::Tensor txt_ids;
  // [B], required exactly when config.guidance_embeds (same scale as
  // timestep: guidance_scale, multiplied by 1000 inside).
  std::optional<at::Tensor> guidance;
};

// diffusers FluxTransformer2DModel. Submodules carry the diffusers attribute
// names, so checkpoint keys are module paths; blocks keep their index in the
// whole model even when this instance holds only a range of them.
class FluxTransformer2DModel : public torch::nn::Module {
 public:
  // INVALID_ARGUMENT when `blocks` is not a non-empty range inside
  // [0, config.total_blocks()].
  static absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>> Create(
      const FluxTransformerConfig& config, std::shared_ptr<Attention> attention,
      BlockRange blocks);

  const FluxTransformerConfig& config() const { return config_; }
  BlockRange blocks() const { return blocks_; }

  // Whether a checkpoint tensor belongs to this instance: every non-block
  // tensor, and block tensors inside the range (io::LoadOptions::include).
  bool HoldsTensor(absl::string_view name) const;

  // Output [B, S_img, patch_size^2 * out_channels]. Needs every block
  // (FAILED_PRECONDITION otherwise); inputs are checked against the config
  // (INVALID_ARGUMENT naming the input and its shape); LibTorch errors come
  // back as INTERNAL.
  absl::StatusOr<at::Tensor> Forward(const FluxTransformerInputs& inputs);

  // This rank's part of a sequence-parallel forward over the joint
  // sequence [text, image] (see SequenceShard). `inputs` are the whole
  // inputs (as for Forward); embedders, modulation, norms, MLPs and RoPE run
  // on the shard's tokens only, each token with the weights of its stream,
  // and attention goes through the model's Attention, which sees
  // the other ranks' shards. Returns [B, shard.tokens, patch_size^2 *
  // out_channels]: the output of the shard's image tokens at their
  // positions and zeros at its text tokens and padding, so that the shards
  // of all ranks concatenate to the padded joint sequence (the caller
  // gathers them; models never call collectives). Errors as Forward, plus
  // INVALID_ARGUMENT for a shard or key mask that does not fit, and the
  // Status of a failed collective.
  absl::StatusOr<at::Tensor> ForwardShard(const FluxTransformerInputs& inputs,
                                          const SequenceShard& shard);

  // One PipeFusion stage: this instance's blocks on the whole sequence. The
  // first stage (range from block 0) embeds `inputs` and takes no
  // `incoming`; a later stage continues from `incoming`, the streams the
  // previous stage returned ([B, S_txt, dim] text, [B, S_img, dim] image).
  // Every stage computes the conditioning and rotary tables from `inputs`
  // itself (all stages hold the non-block tensors), so only the streams
  // travel between stages. Errors as Forward, plus INVALID_ARGUMENT for
  // missing, unexpected or misshapen `incoming` streams.
  absl::StatusOr<FluxStreams> ForwardStage(
      const FluxTransformerInputs& inputs,
      const std::optional<FluxStreams>& incoming);

  // The last stage's output from the image stream its ForwardStage returned:
  // [B, S_img, patch_size^2 * out_channels], as Forward. FAILED_PRECONDITION
  // unless this instance holds the last block.
  absl::StatusOr<at::Tensor> StageOutput(const FluxTransformerInputs& inputs,
                                         const at::Tensor& image_stream);

 private:
  FluxTransformer2DModel(const FluxTransformerConfig& config,
                         std::shared_ptr<Attention> attention,
                         BlockRange blocks);

  absl::Status CheckHoldsEveryBlock() const;
  absl::Status CheckIncoming(const FluxTransformerInputs& inputs,
                             const std::optional<FluxStreams>& incoming) const;
  absl::Status CheckInputs(const FluxTransformerInputs& inputs) const;
  at::Tensor Conditioning(const FluxTransformerInputs& inputs,
                          c10::ScalarType dtype);
  FluxStreams RunBlocks(FluxStreams streams, const at::Tensor& temb,
                        const FluxSequence& sequence);
  FluxSequence WholeSequence(const FluxTransformerInputs& inputs) const;
  at::Tensor ForwardUnchecked(const FluxTransformerInputs& inputs);
  at::Tensor ForwardShardUnchecked(const FluxTransformerInputs& inputs,
                                   const SequenceShard& shard);

  FluxTransformerConfig config_;
  BlockRange blocks_;
  CombinedTimestepTextProjEmbeddings time_text_embed_{nullptr};
  CombinedTimestepGuidanceTextProjEmbeddings time_guidance_text_embed_{nullptr};
  Linear context_embedder_{nullptr};
  Linear x_embedder_{nullptr};
  std::vector<FluxTransformerBlock> transformer_blocks_;
  std::vector<FluxSingleTransformerBlock> single_transformer_blocks_;
  AdaLayerNormContinuous norm_out_{nullptr};
  Linear proj_out_{nullptr};
};

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_FAMILIES_FLUX_FLUX_TRANSFORMER_2D_MODEL_H_
