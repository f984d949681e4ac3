#ifndef DITSERVE_CORE_MODELS_PIXART_PIXART_TRANSFORMER_2D_MODEL_H_
#define DITSERVE_CORE_MODELS_PIXART_PIXART_TRANSFORMER_2D_MODEL_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/models/component_weights.h"
#include "core/models/pixart/pixart_embeddings.h"
#include "core/models/pixart/pixart_transformer_block.h"
#include "core/models/pixart/pixart_transformer_config.h"
#include "core/parallel/attention.h"

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
// carry the diffusers attribute names, so checkpoint keys are module paths.
class PixArtTransformer2DModel : public torch::nn::Module {
 public:
  PixArtTransformer2DModel(const PixArtTransformerConfig& config,
                           std::shared_ptr<parallel::Attention> attention);

  const PixArtTransformerConfig& config() const { return config_; }

  // Output [B, out_channels, H, W]: with learned sigma, channels
  // [0, in_channels) are the noise prediction. Inputs are checked against the
  // config (INVALID_ARGUMENT naming the input and its shape); LibTorch errors
  // come back as INTERNAL.
  absl::StatusOr<at::Tensor> Forward(const PixArtTransformerInputs& inputs);

 private:
  absl::Status CheckInputs(const PixArtTransformerInputs& inputs) const;
  at::Tensor ForwardUnchecked(const PixArtTransformerInputs& inputs);
  // [B, (H/p)(W/p), p * p * C] -> [B, C, H, W].
  at::Tensor Unpatchify(const at::Tensor& tokens, int64_t grid_height,
                        int64_t grid_width) const;

  PixArtTransformerConfig config_;
  PixArtPatchEmbed pos_embed_{nullptr};
  std::vector<PixArtTransformerBlock> transformer_blocks_;
  at::Tensor scale_shift_table_;
  torch::nn::Linear proj_out_{nullptr};
  AdaLayerNormSingle adaln_single_{nullptr};
  PixArtCaptionProjection caption_projection_{nullptr};
};

// Builds a PixArtTransformer2DModel from a diffusers `transformer/` folder
// (config.json + weights) and loads its weights strictly.
absl::StatusOr<std::shared_ptr<PixArtTransformer2DModel>>
LoadPixArtTransformer2DModel(const std::string& component_dir,
                             std::shared_ptr<parallel::Attention> attention,
                             const Placement& placement);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_PIXART_PIXART_TRANSFORMER_2D_MODEL_H_
