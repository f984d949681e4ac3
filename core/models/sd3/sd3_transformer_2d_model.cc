#include "core/models/sd3/sd3_transformer_2d_model.h"

#include <torch/torch.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/models/tensor_checks.h"

namespace ditserve::models {
namespace {

// norm_out: AdaLayerNormContinuous(elementwise_affine=False, eps=1e-6).
constexpr double kNormOutEps = 1e-6;

}  // namespace

SD3Transformer2DModel::SD3Transformer2DModel(
    const SD3TransformerConfig& config,
    std::shared_ptr<parallel::Attention> attention)
    : config_(config) {
  const int64_t dim = config.inner_dim();
  pos_embed_ = register_module(
      "pos_embed", SD3PatchEmbed(config.in_channels, dim, config.patch_size,
                                 config.pos_embed_max_size));
  time_text_embed_ = register_module(
      "time_text_embed",
      CombinedTimestepTextProjEmbeddings(dim, config.pooled_projection_dim));
  context_embedder_ = register_module(
      "context_embedder", torch::nn::Linear(config.joint_attention_dim,
                                            config.caption_projection_dim));
  auto blocks = register_module("transformer_blocks",
                                std::make_shared<torch::nn::Module>());
  for (int64_t index = 0; index < config.num_layers; ++index) {
    transformer_blocks_.push_back(blocks->register_module(
        std::to_string(index),
        JointTransformerBlock(
            dim, config.num_attention_heads, config.attention_head_dim,
            /*context_pre_only=*/index == config.num_layers - 1, config.qk_norm,
            config.uses_dual_attention(index), attention)));
  }
  norm_out_ = register_module("norm_out",
                              AdaLayerNormContinuous(dim, dim, kNormOutEps));
  proj_out_ = register_module(
      "proj_out", torch::nn::Linear(dim, config.patch_size * config.patch_size *
                                             config.out_channels));
}

absl::Status SD3Transformer2DModel::CheckInputs(
    const SD3TransformerInputs& inputs) const {
  absl::Status status =
      CheckShape("hidden_states", inputs.hidden_states,
                 {kAnySize, config_.in_channels, kAnySize, kAnySize});
  if (!status.ok()) return status;
  const int64_t batch = inputs.hidden_states.size(0);
  const int64_t height = inputs.hidden_states.size(2);
  const int64_t width = inputs.hidden_states.size(3);
  if (height % config_.patch_size != 0 || width % config_.patch_size != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("hidden_states is ", height, "x", width,
                     "; height and width must be multiples of patch_size ",
                     config_.patch_size));
  }
  const int64_t max_side = config_.pos_embed_max_size * config_.patch_size;
  if (height > max_side || width > max_side) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hidden_states is ", height, "x", width, "; the position table covers ",
        max_side, "x", max_side, " (pos_embed_max_size ",
        config_.pos_embed_max_size, " x patch_size ", config_.patch_size, ")"));
  }
  status.Update(CheckShape("encoder_hidden_states",
                           inputs.encoder_hidden_states,
                           {batch, kAnySize, config_.joint_attention_dim}));
  status.Update(CheckShape("pooled_projections", inputs.pooled_projections,
                           {batch, config_.pooled_projection_dim}));
  status.Update(CheckShape("timestep", inputs.timestep, {batch}));
  return status;
}

absl::StatusOr<at::Tensor> SD3Transformer2DModel::Forward(
    const SD3TransformerInputs& inputs) {
  if (absl::Status status = CheckInputs(inputs); !status.ok()) return status;
  try {
    return ForwardUnchecked(inputs);
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("SD3Transformer2DModel forward failed: ", e.what()));
  }
}

at::Tensor SD3Transformer2DModel::ForwardUnchecked(
    const SD3TransformerInputs& inputs) {
  const int64_t grid_height = inputs.hidden_states.size(2) / config_.patch_size;
  const int64_t grid_width = inputs.hidden_states.size(3) / config_.patch_size;
  SD3Streams streams;
  streams.image = pos_embed_->Forward(inputs.hidden_states);
  const at::Tensor temb =
      time_text_embed_->Forward(inputs.timestep.to(streams.image.scalar_type()),
                                inputs.pooled_projections);
  streams.text = context_embedder_->forward(inputs.encoder_hidden_states);
  for (JointTransformerBlock& block : transformer_blocks_) {
    streams = block->Forward(streams, temb);
  }
  return Unpatchify(proj_out_->forward(norm_out_->Forward(streams.image, temb)),
                    grid_height, grid_width);
}

at::Tensor SD3Transformer2DModel::Unpatchify(const at::Tensor& tokens,
                                             int64_t grid_height,
                                             int64_t grid_width) const {
  const int64_t patch = config_.patch_size;
  const int64_t channels = config_.out_channels;
  // n h w p q c -> n c h p w q.
  return tokens
      .reshape(
          {tokens.size(0), grid_height, grid_width, patch, patch, channels})
      .permute({0, 5, 1, 3, 2, 4})
      .reshape(
          {tokens.size(0), channels, grid_height * patch, grid_width * patch});
}

absl::StatusOr<std::shared_ptr<SD3Transformer2DModel>>
LoadSD3Transformer2DModel(const std::string& component_dir,
                          std::shared_ptr<parallel::Attention> attention,
                          const Placement& placement) {
  absl::StatusOr<SD3TransformerConfig> config =
      ReadSD3TransformerConfig(component_dir + "/config.json");
  if (!config.ok()) return config.status();
  std::shared_ptr<SD3Transformer2DModel> model;
  try {
    model =
        std::make_shared<SD3Transformer2DModel>(*config, std::move(attention));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(
        "building SD3Transformer2DModel from ", component_dir, ": ", e.what()));
  }
  absl::Status loaded =
      LoadComponentWeights(*model, component_dir, placement, {});
  if (!loaded.ok()) return loaded;
  model->eval();
  return model;
}

}  // namespace ditserve::models
