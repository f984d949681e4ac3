#include "core/families/pixart/pixart_transformer_2d_model.h"

#include <torch/torch.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/models/layers/ada_layer_norm.h"
#include "core/models/layers/unpatchify.h"
#include "core/models/tensor_checks.h"

namespace ditserve::models {
namespace {

// norm_out: LayerNorm(elementwise_affine=False, eps=1e-6), whatever norm_eps.
constexpr double kNormOutEps = 1e-6;
constexpr absl::string_view kBlocks = "transformer_blocks";
// The bias diffusers gives masked caption tokens (not -inf, so a fully
// masked caption still attends uniformly instead of producing NaN).
constexpr double kMaskedKeyBias = -10000.0;

}  // namespace

PixArtTransformer2DModel::PixArtTransformer2DModel(
    const PixArtTransformerConfig& config, std::shared_ptr<Attention> attention,
    std::optional<BlockRange> blocks)
    : config_(config),
      blocks_(blocks.value_or(BlockRange{0, config.num_layers})) {
  if (absl::Status status = CheckBlockRange("PixArtTransformer2DModel", blocks_,
                                            config.num_layers);
      !status.ok()) {
    throw std::invalid_argument(std::string(status.message()));
  }
  const int64_t dim = config.inner_dim();
  pos_embed_ = register_module(
      "pos_embed", PixArtPatchEmbed(config.in_channels, dim, config.patch_size,
                                    static_cast<double>(config.base_size()),
                                    config.interpolation_scale));
  auto block_list = register_module("transformer_blocks",
                                    std::make_shared<torch::nn::Module>());
  for (int64_t index = blocks_.begin; index < blocks_.end; ++index) {
    transformer_blocks_.push_back(block_list->register_module(
        std::to_string(index),
        PixArtTransformerBlock(
            dim, config.num_attention_heads, config.attention_head_dim,
            config.cross_attention_dim, config.attention_bias, config.norm_eps,
            attention)));
  }
  scale_shift_table_ =
      register_parameter("scale_shift_table", torch::zeros({2, dim}));
  proj_out_ =
      register_module("proj_out", Linear(dim, config.token_output_channels()));
  adaln_single_ = register_module(
      "adaln_single",
      AdaLayerNormSingle(dim, config.use_additional_conditions));
  caption_projection_ =
      register_module("caption_projection",
                      PixArtCaptionProjection(config.caption_channels, dim));
}

absl::Status PixArtTransformer2DModel::CheckInputs(
    const PixArtTransformerInputs& inputs) const {
  absl::Status status =
      CheckPatchableLatents("hidden_states", inputs.hidden_states,
                            config_.in_channels, config_.patch_size);
  if (!status.ok()) return status;
  const int64_t batch = inputs.hidden_states.size(0);
  status.Update(CheckShape("encoder_hidden_states",
                           inputs.encoder_hidden_states,
                           {batch, kAnySize, config_.caption_channels}));
  status.Update(CheckShape("timestep", inputs.timestep, {batch}));
  if (!status.ok()) return status;
  if (inputs.encoder_attention_mask.has_value()) {
    status.Update(CheckShape("encoder_attention_mask",
                             *inputs.encoder_attention_mask,
                             {batch, inputs.encoder_hidden_states.size(1)}));
  }
  if (config_.use_additional_conditions) {
    if (!inputs.micro_conditions.has_value()) {
      return absl::InvalidArgumentError(
          "resolution and aspect_ratio are missing; this transformer has "
          "use_additional_conditions=true (PixArt-α) and needs them");
    }
    status.Update(CheckShape("resolution", inputs.micro_conditions->resolution,
                             {batch, 2}));
    status.Update(CheckShape(
        "aspect_ratio", inputs.micro_conditions->aspect_ratio, {batch, 1}));
  } else if (inputs.micro_conditions.has_value()) {
    return absl::InvalidArgumentError(
        "resolution and aspect_ratio were given but this transformer has "
        "use_additional_conditions=false (PixArt-Σ style) and no embedders "
        "for them");
  }
  return status;
}

bool PixArtTransformer2DModel::HoldsTensor(absl::string_view name) const {
  const std::optional<int64_t> block = BlockIndex(name, kBlocks);
  return !block.has_value() || blocks_.Contains(*block);
}

absl::Status PixArtTransformer2DModel::CheckHoldsEveryBlock() const {
  return models::CheckHoldsEveryBlock("PixArtTransformer2DModel", blocks_,
                                      config_.num_layers);
}

absl::StatusOr<at::Tensor> PixArtTransformer2DModel::Forward(
    const PixArtTransformerInputs& inputs) {
  RETURN_IF_ERROR(CheckHoldsEveryBlock());
  RETURN_IF_ERROR(CheckInputs(inputs));
  return base::Guarded("PixArtTransformer2DModel forward", [&] {
    return Unpatchify(
        TokenOutputs(inputs, pos_embed_->Forward(inputs.hidden_states),
                     std::nullopt),
        inputs.hidden_states.size(2) / config_.patch_size,
        inputs.hidden_states.size(3) / config_.patch_size);
  });
}

absl::StatusOr<at::Tensor> PixArtTransformer2DModel::ForwardShard(
    const PixArtTransformerInputs& inputs, const SequenceShard& shard) {
  RETURN_IF_ERROR(CheckHoldsEveryBlock());
  RETURN_IF_ERROR(CheckInputs(inputs));
  RETURN_IF_ERROR(CheckSequenceShard(shard, inputs.hidden_states.size(0)));
  return base::Guarded("PixArtTransformer2DModel forward", [&] {
    // The patch embedding is cheap and its position table covers the whole
    // grid, so it runs on the whole image and the shard is cut after.
    const at::Tensor tokens = pos_embed_->Forward(inputs.hidden_states);
    const ShardParts split = SplitShard(shard, {tokens.size(1)});
    const TokenSpan& image = split.parts[0];
    // Padding follows the image tokens, as zeros; its outputs become zeros.
    const at::Tensor outputs =
        TokenOutputs(inputs,
                     PadTokens(tokens.narrow(1, image.begin, image.tokens), 0,
                               split.padding),
                     shard.key_mask);
    return PadTokens(outputs.narrow(1, 0, image.tokens), 0, split.padding);
  });
}

absl::StatusOr<at::Tensor> PixArtTransformer2DModel::ForwardStage(
    const PixArtTransformerInputs& inputs, const TokenSpan& patch,
    const std::optional<at::Tensor>& incoming) {
  RETURN_IF_ERROR(CheckInputs(inputs));
  RETURN_IF_ERROR(CheckStageArguments(
      "PixArtTransformer2DModel", blocks_, patch,
      (inputs.hidden_states.size(2) / config_.patch_size) *
          (inputs.hidden_states.size(3) / config_.patch_size),
      incoming.has_value()));
  if (incoming.has_value()) {
    RETURN_IF_ERROR(CheckShape(
        "incoming image stream", *incoming,
        {inputs.hidden_states.size(0), patch.tokens, config_.inner_dim()}));
  }
  return base::Guarded("PixArtTransformer2DModel forward", [&] {
    const at::Tensor hidden = incoming.has_value()
                                  ? *incoming
                                  : pos_embed_->Forward(inputs.hidden_states)
                                        .narrow(1, patch.begin, patch.tokens);
    return RunBlocks(hidden, Condition(inputs, hidden.scalar_type()),
                     std::nullopt);
  });
}

absl::StatusOr<at::Tensor> PixArtTransformer2DModel::StageOutput(
    const PixArtTransformerInputs& inputs, const at::Tensor& image_stream) {
  RETURN_IF_ERROR(CheckInputs(inputs));
  RETURN_IF_ERROR(CheckStageOutputArguments(
      "PixArtTransformer2DModel", blocks_, config_.num_layers, image_stream,
      {inputs.hidden_states.size(0), kAnySize, config_.inner_dim()}));
  return base::Guarded("PixArtTransformer2DModel forward", [&] {
    return OutputLayers(image_stream,
                        Condition(inputs, image_stream.scalar_type()));
  });
}

PixArtTransformer2DModel::Conditioning PixArtTransformer2DModel::Condition(
    const PixArtTransformerInputs& inputs, c10::ScalarType dtype) {
  const int64_t batch = inputs.hidden_states.size(0);
  Conditioning conditioning;
  conditioning.timestep =
      adaln_single_->Forward(inputs.timestep, inputs.micro_conditions, dtype);
  conditioning.context =
      caption_projection_->Forward(inputs.encoder_hidden_states)
          .view({batch, -1, config_.inner_dim()});
  if (inputs.encoder_attention_mask.has_value()) {
    // [B, S_txt] -> [B, 1, 1, S_txt]: same keys for every head and query.
    conditioning.context_bias =
        ((1 - inputs.encoder_attention_mask->to(dtype)) * kMaskedKeyBias)
            .unsqueeze(1)
            .unsqueeze(1);
  }
  return conditioning;
}

at::Tensor PixArtTransformer2DModel::RunBlocks(
    at::Tensor hidden, const Conditioning& conditioning,
    const std::optional<at::Tensor>& key_mask) {
  for (PixArtTransformerBlock& block : transformer_blocks_) {
    hidden =
        block->Forward(hidden, conditioning.context, conditioning.context_bias,
                       conditioning.timestep.modulation, key_mask);
  }
  return hidden;
}

at::Tensor PixArtTransformer2DModel::OutputLayers(
    const at::Tensor& hidden, const Conditioning& conditioning) {
  const std::vector<at::Tensor> shift_scale =
      (scale_shift_table_.unsqueeze(0) +
       conditioning.timestep.embedded_timestep.unsqueeze(1))
          .chunk(2, /*dim=*/1);
  return proj_out_->forward(PlainLayerNorm(hidden, kNormOutEps) *
                                (1 + shift_scale[1]) +
                            shift_scale[0]);
}

at::Tensor PixArtTransformer2DModel::TokenOutputs(
    const PixArtTransformerInputs& inputs, at::Tensor hidden,
    const std::optional<at::Tensor>& key_mask) {
  const Conditioning conditioning = Condition(inputs, hidden.scalar_type());
  return OutputLayers(RunBlocks(std::move(hidden), conditioning, key_mask),
                      conditioning);
}

at::Tensor PixArtTransformer2DModel::Unpatchify(const at::Tensor& tokens,
                                                int64_t grid_height,
                                                int64_t grid_width) const {
  return models::Unpatchify(tokens, grid_height, grid_width, config_.patch_size,
                            config_.out_channels);
}

absl::StatusOr<std::shared_ptr<PixArtTransformer2DModel>>
LoadPixArtTransformer2DModel(const std::string& component_dir,
                             std::shared_ptr<Attention> attention,
                             const Placement& placement,
                             std::optional<BlockRange> blocks) {
  ASSIGN_OR_RETURN(PixArtTransformerConfig config,
                   ReadPixArtTransformerConfig(component_dir + "/config.json"));
  return BuildAndLoad<PixArtTransformer2DModel>(
      "PixArtTransformer2DModel", component_dir, placement, config,
      std::move(attention), blocks);
}

}  // namespace ditserve::models
