#include "core/families/sd3/sd3_transformer_2d_model.h"

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
#include "core/models/layers/unpatchify.h"
#include "core/models/tensor_checks.h"

namespace ditserve::models {
namespace {

// norm_out: AdaLayerNormContinuous(elementwise_affine=False, eps=1e-6).
constexpr double kNormOutEps = 1e-6;

constexpr absl::string_view kBlocks = "transformer_blocks";
// Weights of a block in units of inner_dim², biases and norms left out: a
// joint block has two AdaLayerNormZero (6 each), Q/K/V/out for image and
// text (8) and two 4x feed-forwards (16); the last (context_pre_only) block
// has a text norm of 2, no text output projection and no text MLP; dual
// attention adds attn2 (4) and its modulation (3).
constexpr int64_t kJointBlockWeight = 36;
constexpr int64_t kContextPreOnlyBlockWeight = 23;
constexpr int64_t kDualAttentionWeight = 7;

// Runs a forward at the exception boundary.
template <typename Body>
auto Guarded(Body body) {
  return base::Guarded("SD3Transformer2DModel forward", std::move(body));
}

}  // namespace

SD3Transformer2DModel::SD3Transformer2DModel(
    const SD3TransformerConfig& config, std::shared_ptr<Attention> attention,
    std::optional<BlockRange> blocks)
    : config_(config),
      blocks_(blocks.value_or(BlockRange{0, config.num_layers})) {
  if (absl::Status status =
          CheckBlockRange("SD3Transformer2DModel", blocks_, config.num_layers);
      !status.ok()) {
    throw std::invalid_argument(std::string(status.message()));
  }
  const int64_t dim = config.inner_dim();
  pos_embed_ = register_module(
      "pos_embed", SD3PatchEmbed(config.in_channels, dim, config.patch_size,
                                 config.pos_embed_max_size));
  time_text_embed_ = register_module(
      "time_text_embed",
      CombinedTimestepTextProjEmbeddings(dim, config.pooled_projection_dim));
  context_embedder_ = register_module(
      "context_embedder",
      Linear(config.joint_attention_dim, config.caption_projection_dim));
  auto block_list = register_module(std::string(kBlocks),
                                    std::make_shared<torch::nn::Module>());
  for (int64_t index = blocks_.begin; index < blocks_.end; ++index) {
    transformer_blocks_.push_back(block_list->register_module(
        std::to_string(index),
        JointTransformerBlock(
            dim, config.num_attention_heads, config.attention_head_dim,
            /*context_pre_only=*/index == config.num_layers - 1, config.qk_norm,
            config.uses_dual_attention(index), attention)));
  }
  norm_out_ = register_module("norm_out",
                              AdaLayerNormContinuous(dim, dim, kNormOutEps));
  proj_out_ =
      register_module("proj_out", Linear(dim, config.token_output_channels()));
}

absl::Status SD3Transformer2DModel::CheckInputs(
    const SD3TransformerInputs& inputs) const {
  absl::Status status =
      CheckPatchableLatents("hidden_states", inputs.hidden_states,
                            config_.in_channels, config_.patch_size);
  if (!status.ok()) return status;
  const int64_t batch = inputs.hidden_states.size(0);
  const int64_t height = inputs.hidden_states.size(2);
  const int64_t width = inputs.hidden_states.size(3);
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

BlockRange SD3Transformer2DModel::StageBlocks(
    const SD3TransformerConfig& config, int stage, int stages) {
  std::vector<int64_t> weights;
  for (int64_t block = 0; block < config.num_layers; ++block) {
    weights.push_back(
        (block == config.num_layers - 1 ? kContextPreOnlyBlockWeight
                                        : kJointBlockWeight) +
        (config.uses_dual_attention(block) ? kDualAttentionWeight : 0));
  }
  return SplitBlocksByWeight(weights, stage, stages);
}

bool SD3Transformer2DModel::HoldsTensor(absl::string_view name) const {
  const std::optional<int64_t> block = BlockIndex(name, kBlocks);
  return !block.has_value() || blocks_.Contains(*block);
}

absl::Status SD3Transformer2DModel::CheckHoldsEveryBlock() const {
  return models::CheckHoldsEveryBlock("SD3Transformer2DModel", blocks_,
                                      config_.num_layers);
}

absl::StatusOr<at::Tensor> SD3Transformer2DModel::Forward(
    const SD3TransformerInputs& inputs) {
  RETURN_IF_ERROR(CheckHoldsEveryBlock());
  RETURN_IF_ERROR(CheckInputs(inputs));
  return Guarded([&] { return ForwardUnchecked(inputs); });
}

absl::StatusOr<at::Tensor> SD3Transformer2DModel::ForwardShard(
    const SD3TransformerInputs& inputs, const SequenceShard& shard) {
  RETURN_IF_ERROR(CheckHoldsEveryBlock());
  RETURN_IF_ERROR(CheckInputs(inputs));
  RETURN_IF_ERROR(CheckSequenceShard(shard, inputs.hidden_states.size(0)));
  return Guarded([&] { return ForwardShardUnchecked(inputs, shard); });
}

absl::Status SD3Transformer2DModel::CheckStage(
    const SD3TransformerInputs& inputs, const TokenSpan& patch,
    const std::optional<SD3Streams>& incoming) const {
  RETURN_IF_ERROR(CheckStageArguments(
      "SD3Transformer2DModel", blocks_, patch,
      (inputs.hidden_states.size(2) / config_.patch_size) *
          (inputs.hidden_states.size(3) / config_.patch_size),
      incoming.has_value()));
  if (!incoming.has_value()) return absl::OkStatus();
  const int64_t batch = inputs.hidden_states.size(0);
  absl::Status status = CheckShape("incoming image stream", incoming->image,
                                   {batch, patch.tokens, config_.inner_dim()});
  status.Update(CheckShape(
      "incoming text stream", incoming->text,
      {batch, inputs.encoder_hidden_states.size(1), config_.inner_dim()}));
  return status;
}

absl::StatusOr<SD3Streams> SD3Transformer2DModel::ForwardStage(
    const SD3TransformerInputs& inputs, const TokenSpan& patch,
    const std::optional<SD3Streams>& incoming) {
  RETURN_IF_ERROR(CheckInputs(inputs));
  RETURN_IF_ERROR(CheckStage(inputs, patch, incoming));
  return Guarded([&] {
    SD3Streams streams;
    if (incoming.has_value()) {
      streams = *incoming;
    } else {
      streams.image = pos_embed_->Forward(inputs.hidden_states)
                          .narrow(1, patch.begin, patch.tokens);
      streams.text = context_embedder_->forward(inputs.encoder_hidden_states);
    }
    const at::Tensor temb = TimestepEmbedding(inputs);
    return RunBlocks(std::move(streams), temb, {});
  });
}

absl::StatusOr<at::Tensor> SD3Transformer2DModel::StageOutput(
    const SD3TransformerInputs& inputs, const at::Tensor& image_stream) {
  RETURN_IF_ERROR(CheckInputs(inputs));
  RETURN_IF_ERROR(CheckStageOutputArguments(
      "SD3Transformer2DModel", blocks_, config_.num_layers, image_stream,
      {inputs.hidden_states.size(0), kAnySize, config_.inner_dim()}));
  return Guarded([&] {
    const at::Tensor temb = TimestepEmbedding(inputs);
    return proj_out_->forward(norm_out_->Forward(image_stream, temb));
  });
}

at::Tensor SD3Transformer2DModel::TimestepEmbedding(
    const SD3TransformerInputs& inputs) {
  return time_text_embed_->Forward(inputs.timestep, inputs.pooled_projections);
}

SD3Streams SD3Transformer2DModel::RunBlocks(SD3Streams streams,
                                            const at::Tensor& temb,
                                            const SD3KeyMasks& key_masks) {
  for (JointTransformerBlock& block : transformer_blocks_) {
    streams = block->Forward(streams, temb, key_masks);
  }
  return streams;
}

at::Tensor SD3Transformer2DModel::ImageTokenOutputs(
    const SD3TransformerInputs& inputs, SD3Streams streams,
    const SD3KeyMasks& key_masks) {
  const at::Tensor temb = TimestepEmbedding(inputs);
  streams = RunBlocks(std::move(streams), temb, key_masks);
  return proj_out_->forward(norm_out_->Forward(streams.image, temb));
}

at::Tensor SD3Transformer2DModel::ForwardUnchecked(
    const SD3TransformerInputs& inputs) {
  SD3Streams streams;
  streams.image = pos_embed_->Forward(inputs.hidden_states);
  streams.text = context_embedder_->forward(inputs.encoder_hidden_states);
  return Unpatchify(ImageTokenOutputs(inputs, std::move(streams), {}),
                    inputs.hidden_states.size(2) / config_.patch_size,
                    inputs.hidden_states.size(3) / config_.patch_size);
}

at::Tensor SD3Transformer2DModel::ForwardShardUnchecked(
    const SD3TransformerInputs& inputs, const SequenceShard& shard) {
  // The patch embedding is cheap and its position table is cropped to the
  // whole grid, so it runs on the whole image and the shard is cut after.
  const at::Tensor image_tokens = pos_embed_->Forward(inputs.hidden_states);
  const ShardParts split = SplitShard(
      shard, {image_tokens.size(1), inputs.encoder_hidden_states.size(1)});
  const TokenSpan& image = split.parts[0];
  const TokenSpan& text = split.parts[1];
  SD3Streams streams;
  streams.image = image_tokens.narrow(1, image.begin, image.tokens);
  // Padding follows the text tokens in the text stream, as zeros.
  streams.text =
      PadTokens(context_embedder_->forward(inputs.encoder_hidden_states.narrow(
                    1, text.begin, text.tokens)),
                0, split.padding);
  SD3KeyMasks key_masks;
  key_masks.joint = shard.key_mask;
  key_masks.image_only =
      at::arange(shard.tokens, inputs.hidden_states.options().dtype(at::kLong))
          .lt(image.tokens)
          .unsqueeze(0)
          .expand({inputs.hidden_states.size(0), shard.tokens});
  // SD3 has no output for text tokens; they and the padding get zeros.
  return PadTokens(ImageTokenOutputs(inputs, std::move(streams), key_masks), 0,
                   text.tokens + split.padding);
}

at::Tensor SD3Transformer2DModel::Unpatchify(const at::Tensor& tokens,
                                             int64_t grid_height,
                                             int64_t grid_width) const {
  return models::Unpatchify(tokens, grid_height, grid_width, config_.patch_size,
                            config_.out_channels);
}

absl::StatusOr<std::shared_ptr<SD3Transformer2DModel>>
LoadSD3Transformer2DModel(const std::string& component_dir,
                          std::shared_ptr<Attention> attention,
                          const Placement& placement,
                          std::optional<BlockRange> blocks) {
  ASSIGN_OR_RETURN(SD3TransformerConfig config,
                   ReadSD3TransformerConfig(component_dir + "/config.json"));
  return BuildAndLoad<SD3Transformer2DModel>("SD3Transformer2DModel",
                                             component_dir, placement, config,
                                             std::move(attention), blocks);
}

}  // namespace ditserve::models
