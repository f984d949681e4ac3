#include "core/families/flux/flux_transformer_2d_model.h"

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/models/block_range.h"
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

// Runs a forward at the exception boundary.
template <typename Body>
auto Guarded(Body body) {
  return base::Guarded("FluxTransformer2DModel forward", std::move(body));
}

}  // namespace

BlockRange FluxStageBlocks(const FluxTransformerConfig& config, int stage,
                           int stages) {
  return SplitBlocksByWeight(std::vector<int64_t>(config.total_blocks(), 1),
                             stage, stages);
}

absl::StatusOr<std::shared_ptr<FluxTransformer2DModel>>
FluxTransformer2DModel::Create(const FluxTransformerConfig& config,
                               std::shared_ptr<Attention> attention,
                               BlockRange blocks) {
  RETURN_IF_ERROR(
      CheckBlockRange("FluxTransformer2DModel", blocks, config.total_blocks()));
  return std::shared_ptr<FluxTransformer2DModel>(
      new FluxTransformer2DModel(config, std::move(attention), blocks));
}

FluxTransformer2DModel::FluxTransformer2DModel(
    const FluxTransformerConfig& config, std::shared_ptr<Attention> attention,
    BlockRange blocks)
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
  context_embedder_ = register_module("context_embedder",
                                      Linear(config.joint_attention_dim, dim));
  x_embedder_ = register_module("x_embedder", Linear(config.in_channels, dim));
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
  proj_out_ =
      register_module("proj_out", Linear(dim, config.output_channels()));
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

absl::Status FluxTransformer2DModel::CheckHoldsEveryBlock() const {
  return models::CheckHoldsEveryBlock("FluxTransformer2DModel", blocks_,
                                      config_.total_blocks());
}

absl::StatusOr<at::Tensor> FluxTransformer2DModel::Forward(
    const FluxTransformerInputs& inputs) {
  RETURN_IF_ERROR(CheckHoldsEveryBlock());
  RETURN_IF_ERROR(CheckInputs(inputs));
  return Guarded([&] { return ForwardUnchecked(inputs); });
}

absl::StatusOr<at::Tensor> FluxTransformer2DModel::ForwardShard(
    const FluxTransformerInputs& inputs, const SequenceShard& shard) {
  RETURN_IF_ERROR(CheckHoldsEveryBlock());
  RETURN_IF_ERROR(CheckInputs(inputs));
  RETURN_IF_ERROR(CheckSequenceShard(shard, inputs.hidden_states.size(0)));
  return Guarded([&] { return ForwardShardUnchecked(inputs, shard); });
}

absl::Status FluxTransformer2DModel::CheckIncoming(
    const FluxTransformerInputs& inputs,
    const std::optional<FluxStreams>& incoming) const {
  // A patch forward gets its patch's tokens as the inputs: all of them.
  const int64_t image_tokens = inputs.hidden_states.size(1);
  if (absl::Status status = CheckStageArguments(
          "FluxTransformer2DModel", blocks_, {0, image_tokens}, image_tokens,
          incoming.has_value());
      !status.ok() || !incoming.has_value()) {
    return status;
  }
  const int64_t batch = inputs.hidden_states.size(0);
  const int64_t dim = config_.inner_dim();
  absl::Status status =
      CheckShape("incoming text stream", incoming->text,
                 {batch, inputs.encoder_hidden_states.size(1), dim});
  status.Update(CheckShape("incoming image stream", incoming->image,
                           {batch, inputs.hidden_states.size(1), dim}));
  return status;
}

absl::StatusOr<FluxStreams> FluxTransformer2DModel::ForwardStage(
    const FluxTransformerInputs& inputs,
    const std::optional<FluxStreams>& incoming) {
  RETURN_IF_ERROR(CheckInputs(inputs));
  RETURN_IF_ERROR(CheckIncoming(inputs, incoming));
  return Guarded([&] {
    FluxStreams streams;
    if (incoming.has_value()) {
      streams = *incoming;
    } else {
      streams.image = x_embedder_->forward(inputs.hidden_states);
      streams.text = context_embedder_->forward(inputs.encoder_hidden_states);
    }
    const at::Tensor temb = Conditioning(inputs, streams.image.scalar_type());
    return RunBlocks(std::move(streams), temb, WholeSequence(inputs));
  });
}

absl::StatusOr<at::Tensor> FluxTransformer2DModel::StageOutput(
    const FluxTransformerInputs& inputs, const at::Tensor& image_stream) {
  RETURN_IF_ERROR(CheckInputs(inputs));
  RETURN_IF_ERROR(CheckStageOutputArguments(
      "FluxTransformer2DModel", blocks_, config_.total_blocks(), image_stream,
      {inputs.hidden_states.size(0), inputs.hidden_states.size(1),
       config_.inner_dim()}));
  return Guarded([&] {
    const at::Tensor temb = Conditioning(inputs, image_stream.scalar_type());
    return proj_out_->forward(norm_out_->Forward(image_stream, temb));
  });
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

FluxStreams FluxTransformer2DModel::RunBlocks(FluxStreams streams,
                                              const at::Tensor& temb,
                                              const FluxSequence& sequence) {
  for (FluxTransformerBlock& block : transformer_blocks_) {
    streams = block->Forward(streams, temb, sequence);
  }
  for (FluxSingleTransformerBlock& block : single_transformer_blocks_) {
    streams = block->Forward(streams, temb, sequence);
  }
  return streams;
}

FluxSequence FluxTransformer2DModel::WholeSequence(
    const FluxTransformerInputs& inputs) const {
  return FluxSequence{.rotary = FluxRotaryTables(
                          at::cat({inputs.txt_ids, inputs.img_ids}, /*dim=*/0),
                          config_.axes_dims_rope, kRopeTheta),
                      .key_mask = std::nullopt};
}

at::Tensor FluxTransformer2DModel::ForwardUnchecked(
    const FluxTransformerInputs& inputs) {
  FluxStreams streams;
  streams.image = x_embedder_->forward(inputs.hidden_states);
  const at::Tensor temb = Conditioning(inputs, streams.image.scalar_type());
  streams.text = context_embedder_->forward(inputs.encoder_hidden_states);
  streams = RunBlocks(std::move(streams), temb, WholeSequence(inputs));
  return proj_out_->forward(norm_out_->Forward(streams.image, temb));
}

at::Tensor FluxTransformer2DModel::ForwardShardUnchecked(
    const FluxTransformerInputs& inputs, const SequenceShard& shard) {
  const ShardParts split = SplitShard(
      shard,
      {inputs.encoder_hidden_states.size(1), inputs.hidden_states.size(1)});
  const TokenSpan& text = split.parts[0];
  const TokenSpan& image = split.parts[1];
  FluxStreams streams;
  // Padding follows the image tokens in the image stream, as zeros.
  streams.image = PadTokens(x_embedder_->forward(inputs.hidden_states.narrow(
                                1, image.begin, image.tokens)),
                            0, split.padding);
  const at::Tensor temb = Conditioning(inputs, streams.image.scalar_type());
  streams.text = context_embedder_->forward(
      inputs.encoder_hidden_states.narrow(1, text.begin, text.tokens));
  // Padding rows take position 0: any position would do, since padded keys
  // are masked and padded queries' outputs are dropped.
  const at::Tensor ids =
      at::cat({inputs.txt_ids.narrow(0, text.begin, text.tokens),
               inputs.img_ids.narrow(0, image.begin, image.tokens),
               at::zeros({split.padding, inputs.img_ids.size(1)},
                         inputs.img_ids.options())},
              /*dim=*/0);
  const FluxSequence sequence{
      .rotary = FluxRotaryTables(ids, config_.axes_dims_rope, kRopeTheta),
      .key_mask = shard.key_mask};
  streams = RunBlocks(std::move(streams), temb, sequence);
  // FLUX has no output for text tokens; they and the padding get zeros.
  return PadTokens(proj_out_->forward(norm_out_->Forward(
                       streams.image.narrow(1, 0, image.tokens), temb)),
                   text.tokens, split.padding);
}

}  // namespace ditserve::models
