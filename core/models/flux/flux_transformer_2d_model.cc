#include "core/models/flux/flux_transformer_2d_model.h"

#include <torch/torch.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/models/layers/rotary_embedding.h"
#include "core/models/tensor_checks.h"

namespace ditserve::models {
namespace {

constexpr double kRopeTheta = 10000.0;
// norm_out: AdaLayerNormContinuous(elementwise_affine=False, eps=1e-6).
constexpr double kNormOutEps = 1e-6;
// Timestep and guidance arrive divided by 1000 (the scheduler's sigma scale).
constexpr double kTimestepScale = 1000.0;

constexpr absl::string_view kDoubleBlocks = "transformer_blocks";
constexpr absl::string_view kSingleBlocks = "single_transformer_blocks";

// The block index of "<list>.<index>.rest", or nullopt for other names.
std::optional<int64_t> BlockIndex(absl::string_view name,
                                  absl::string_view list) {
  if (!absl::ConsumePrefix(&name, list) || !absl::ConsumePrefix(&name, ".")) {
    return std::nullopt;
  }
  int64_t index = 0;
  if (!absl::SimpleAtoi(name.substr(0, name.find('.')), &index)) {
    return std::nullopt;
  }
  return index;
}

}  // namespace

absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>>
FluxTransformer2DModel::Create(const FluxTransformerConfig& config,
                               std::shared_ptr<parallel::Attention> attention,
                               FluxBlockRange blocks) {
  if (blocks.begin < 0 || blocks.end <= blocks.begin ||
      blocks.end > config.total_blocks()) {
    return absl::InvalidArgumentError(
        absl::StrCat("FLUX block range [", blocks.begin, ", ", blocks.end,
                     ") is not a non-empty range inside [0, ",
                     config.total_blocks(), ") (num_layers ", config.num_layers,
                     " + num_single_layers ", config.num_single_layers, ")"));
  }
  return std::shared_ptr<FluxTransformer2DModel>(
      new FluxTransformer2DModel(config, std::move(attention), blocks));
}

FluxTransformer2DModel::FluxTransformer2DModel(
    const FluxTransformerConfig& config,
    std::shared_ptr<parallel::Attention> attention, FluxBlockRange blocks)
    : config_(config), blocks_(blocks) {
  const int64_t dim = config.inner_dim();
  if (config.guidance_embeds) {
    time_guidance_text_embed_ = register_module(
        "time_text_embed", CombinedTimestepGuidanceTextProjEmbeddings(
                               dim, config.pooled_projection_dim));
  } else {
    time_text_embed_ = register_module(
        "time_text_embed",
        CombinedTimestepTextProjEmbeddings(dim, config.pooled_projection_dim));
  }
  context_embedder_ = register_module(
      "context_embedder", torch::nn::Linear(config.joint_attention_dim, dim));
  x_embedder_ =
      register_module("x_embedder", torch::nn::Linear(config.in_channels, dim));
  // Plain containers whose children are named by their index in the whole
  // model, so block 12 is "transformer_blocks.12" whichever blocks exist.
  auto double_list = register_module(std::string(kDoubleBlocks),
                                     std::make_shared<torch::nn::Module>());
  auto single_list = register_module(std::string(kSingleBlocks),
                                     std::make_shared<torch::nn::Module>());
  for (int64_t block = blocks.begin; block < blocks.end; ++block) {
    if (block < config.num_layers) {
      transformer_blocks_.push_back(double_list->register_module(
          std::to_string(block),
          FluxTransformerBlock(dim, config.num_attention_heads,
                               config.attention_head_dim, attention)));
    } else {
      single_transformer_blocks_.push_back(single_list->register_module(
          std::to_string(block - config.num_layers),
          FluxSingleTransformerBlock(dim, config.num_attention_heads,
                                     config.attention_head_dim, attention)));
    }
  }
  norm_out_ = register_module("norm_out",
                              AdaLayerNormContinuous(dim, dim, kNormOutEps));
  proj_out_ = register_module(
      "proj_out", torch::nn::Linear(dim, config.patch_size * config.patch_size *
                                             config.out_channels));
}

bool FluxTransformer2DModel::HoldsTensor(absl::string_view name) const {
  if (std::optional<int64_t> index = BlockIndex(name, kDoubleBlocks)) {
    return *index >= blocks_.begin && *index < blocks_.end;
  }
  if (std::optional<int64_t> index = BlockIndex(name, kSingleBlocks)) {
    const int64_t block = config_.num_layers + *index;
    return block >= blocks_.begin && block < blocks_.end;
  }
  return true;
}

absl::Status FluxTransformer2DModel::CheckInputs(
    const FluxTransformerInputs& inputs) const {
  const int64_t axes = static_cast<int64_t>(config_.axes_dims_rope.size());
  absl::Status status = CheckShape("hidden_states", inputs.hidden_states,
                                   {kAnySize, kAnySize, config_.in_channels});
  if (!status.ok()) return status;
  const int64_t batch = inputs.hidden_states.size(0);
  const int64_t image_tokens = inputs.hidden_states.size(1);
  status.Update(CheckShape("encoder_hidden_states",
                           inputs.encoder_hidden_states,
                           {batch, kAnySize, config_.joint_attention_dim}));
  if (!status.ok()) return status;
  const int64_t text_tokens = inputs.encoder_hidden_states.size(1);
  status.Update(CheckShape("pooled_projections", inputs.pooled_projections,
                           {batch, config_.pooled_projection_dim}));
  status.Update(CheckShape("timestep", inputs.timestep, {batch}));
  status.Update(CheckShape("img_ids", inputs.img_ids, {image_tokens, axes}));
  status.Update(CheckShape("txt_ids", inputs.txt_ids, {text_tokens, axes}));
  if (!status.ok()) return status;
  if (config_.guidance_embeds) {
    if (!inputs.guidance.has_value()) {
      return absl::InvalidArgumentError(
          "guidance is missing; this transformer has guidance_embeds=true "
          "(FLUX.1-dev style) and needs guidance of shape [batch]");
    }
    return CheckShape("guidance", *inputs.guidance, {batch});
  }
  if (inputs.guidance.has_value()) {
    return absl::InvalidArgumentError(
        "guidance was given but this transformer has guidance_embeds=false "
        "(FLUX.1-schnell style) and has no guidance embedder");
  }
  return absl::OkStatus();
}

absl::StatusOr<at::Tensor> FluxTransformer2DModel::Forward(
    const FluxTransformerInputs& inputs) {
  if (blocks_.begin != 0 || blocks_.end != config_.total_blocks()) {
    return absl::FailedPreconditionError(
        absl::StrCat("FluxTransformer2DModel holds blocks [", blocks_.begin,
                     ", ", blocks_.end, ") of ", config_.total_blocks(),
                     "; a whole-model forward needs all of them"));
  }
  if (absl::Status status = CheckInputs(inputs); !status.ok()) return status;
  try {
    return ForwardUnchecked(inputs);
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("FluxTransformer2DModel forward failed: ", e.what()));
  }
}

at::Tensor FluxTransformer2DModel::Conditioning(
    const FluxTransformerInputs& inputs, c10::ScalarType dtype) {
  const at::Tensor timestep = inputs.timestep.to(dtype) * kTimestepScale;
  if (config_.guidance_embeds) {
    const at::Tensor guidance = inputs.guidance->to(dtype) * kTimestepScale;
    return time_guidance_text_embed_->Forward(timestep, guidance,
                                              inputs.pooled_projections);
  }
  return time_text_embed_->Forward(timestep, inputs.pooled_projections);
}

at::Tensor FluxTransformer2DModel::ForwardUnchecked(
    const FluxTransformerInputs& inputs) {
  FluxStreams streams;
  streams.image = x_embedder_->forward(inputs.hidden_states);
  const at::Tensor temb = Conditioning(inputs, streams.image.scalar_type());
  streams.text = context_embedder_->forward(inputs.encoder_hidden_states);
  const RotaryTables rotary =
      FluxRotaryTables(at::cat({inputs.txt_ids, inputs.img_ids}, /*dim=*/0),
                       config_.axes_dims_rope, kRopeTheta);
  for (FluxTransformerBlock& block : transformer_blocks_) {
    streams = block->Forward(streams, temb, rotary);
  }
  for (FluxSingleTransformerBlock& block : single_transformer_blocks_) {
    streams = block->Forward(streams, temb, rotary);
  }
  return proj_out_->forward(norm_out_->Forward(streams.image, temb));
}

}  // namespace ditserve::models
