#include "core/families/cogvideox/cogvideox_transformer_3d_model.h"

#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/models/tensor_checks.h"

namespace ditserve::families {
namespace {

constexpr absl::string_view kModel = "CogVideoXTransformer3DModel";
constexpr absl::string_view kBlocks = "transformer_blocks";

torch::nn::LayerNorm AffineLayerNorm(int64_t dim, double eps) {
  return torch::nn::LayerNorm(
      torch::nn::LayerNormOptions({dim}).eps(eps).elementwise_affine(true));
}

// Tables for every token of [text | video]: text rows leave q and k as they
// are (cos 1, sin 0), so that one rotation covers the joint sequence and any
// shard of it.
models::RotaryTables JointRotary(const models::RotaryTables& video,
                                 int64_t text_tokens) {
  const int64_t dim = video.cos.size(1);
  return {
      at::cat({at::ones({text_tokens, dim}, video.cos.options()), video.cos}),
      at::cat({at::zeros({text_tokens, dim}, video.sin.options()), video.sin})};
}

}  // namespace

CogVideoXPatchEmbedImpl::CogVideoXPatchEmbedImpl(
    const CogVideoXTransformerConfig& config)
    : config_(config) {
  const int64_t p = config.patch_size;
  if (config.patch_size_t.has_value()) {
    patch_proj_ = register_module(
        "proj",
        models::Linear(config.in_channels * config.temporal_patch() * p * p,
                       config.inner_dim()));
  } else {
    frame_proj_ = register_module(
        "proj", models::Conv2d(torch::nn::Conv2dOptions(config.in_channels,
                                                        config.inner_dim(), p)
                                   .stride(p)
                                   .bias(config.patch_bias)));
  }
  text_proj_ = register_module(
      "text_proj", models::Linear(config.text_embed_dim, config.inner_dim()));
}

at::Tensor CogVideoXPatchEmbedImpl::EmbedVideo(const at::Tensor& video) {
  const int64_t batch = video.size(0);
  const int64_t frames = video.size(1);
  const int64_t channels = video.size(2);
  const int64_t height = video.size(3);
  const int64_t width = video.size(4);
  if (!frame_proj_.is_empty()) {
    // Every frame on its own; tokens (t, h, w) with w fastest.
    const at::Tensor embedded =
        frame_proj_->forward(video.reshape({-1, channels, height, width}));
    return embedded.view({batch, frames, embedded.size(1), -1})
        .transpose(2, 3)
        .flatten(1, 2);
  }
  const int64_t p = config_.patch_size;
  const int64_t pt = config_.temporal_patch();
  // Patch features ordered (c, pt, ph, pw), tokens (t, h, w).
  const at::Tensor patches = video.permute({0, 1, 3, 4, 2})
                                 .reshape({batch, frames / pt, pt, height / p,
                                           p, width / p, p, channels})
                                 .permute({0, 1, 3, 5, 7, 2, 4, 6})
                                 .flatten(4, 7)
                                 .flatten(1, 3);
  return patch_proj_->forward(patches);
}

at::Tensor CogVideoXPatchEmbedImpl::Forward(const at::Tensor& text,
                                            const at::Tensor& video,
                                            const at::Tensor& sincos) {
  at::Tensor embedded = EmbedVideo(video);
  if (sincos.defined()) {
    embedded = embedded + sincos.to(embedded.scalar_type());
  }
  return at::cat({text_proj_->forward(text), embedded}, /*dim=*/1);
}

CogVideoXOutputNormImpl::CogVideoXOutputNormImpl(int64_t conditioning_dim,
                                                 int64_t dim, double eps)
    : linear_(
          register_module("linear", models::Linear(conditioning_dim, 2 * dim))),
      norm_(register_module("norm", AffineLayerNorm(dim, eps))) {}

at::Tensor CogVideoXOutputNormImpl::Forward(const at::Tensor& x,
                                            const at::Tensor& temb) {
  const std::vector<at::Tensor> shift_scale =
      linear_->forward(at::silu(temb)).unsqueeze(1).chunk(2, /*dim=*/2);
  return norm_->forward(x) * (1 + shift_scale[1]) + shift_scale[0];
}

CogVideoXTransformer3DModel::CogVideoXTransformer3DModel(
    const CogVideoXTransformerConfig& config,
    std::shared_ptr<models::Attention> attention,
    std::optional<models::BlockRange> blocks)
    : config_(config),
      blocks_(blocks.value_or(models::BlockRange{0, config.num_layers})) {
  if (absl::Status status =
          models::CheckBlockRange(kModel, blocks_, config.num_layers);
      !status.ok()) {
    throw std::invalid_argument(std::string(status.message()));
  }
  const int64_t dim = config.inner_dim();
  patch_embed_ = register_module("patch_embed", CogVideoXPatchEmbed(config));
  time_embedding_ = register_module(
      "time_embedding", models::TimestepEmbedding(dim, config.time_embed_dim));
  auto block_list = register_module(std::string(kBlocks),
                                    std::make_shared<torch::nn::Module>());
  for (int64_t index = blocks_.begin; index < blocks_.end; ++index) {
    transformer_blocks_.push_back(block_list->register_module(
        std::to_string(index), CogVideoXBlock(config, attention)));
  }
  norm_final_ =
      register_module("norm_final", AffineLayerNorm(dim, config.norm_eps));
  norm_out_ = register_module(
      "norm_out",
      CogVideoXOutputNorm(config.time_embed_dim, dim, config.norm_eps));
  proj_out_ = register_module(
      "proj_out", models::Linear(dim, config.token_output_channels()));
}

bool CogVideoXTransformer3DModel::HoldsTensor(absl::string_view name) const {
  const std::optional<int64_t> block = models::BlockIndex(name, kBlocks);
  return !block.has_value() || blocks_.Contains(*block);
}

absl::StatusOr<VideoTokenGrid> CogVideoXTransformer3DModel::CheckInputs(
    const CogVideoXTransformerInputs& inputs) const {
  RETURN_IF_ERROR(models::CheckShape(
      "hidden_states", inputs.hidden_states,
      {models::kAnySize, models::kAnySize, config_.in_channels,
       models::kAnySize, models::kAnySize}));
  const int64_t batch = inputs.hidden_states.size(0);
  const int64_t text_tokens = config_.use_rotary_positional_embeddings
                                  ? models::kAnySize
                                  : config_.max_text_seq_length;
  RETURN_IF_ERROR(
      models::CheckShape("encoder_hidden_states", inputs.encoder_hidden_states,
                         {batch, text_tokens, config_.text_embed_dim}));
  RETURN_IF_ERROR(models::CheckShape("timestep", inputs.timestep, {batch}));
  return TokenGridOf(config_, inputs.hidden_states.size(1),
                     inputs.hidden_states.size(3),
                     inputs.hidden_states.size(4));
}

absl::StatusOr<VideoPositions> CogVideoXTransformer3DModel::PositionsOn(
    const VideoTokenGrid& grid, at::Device device) {
  return base::Guarded(absl::StrCat(kModel, " position tables"), [&] {
    return positions_.Get(
        std::make_tuple(grid.frames, grid.height, grid.width, device),
        [&]() -> absl::StatusOr<VideoPositions> {
          VideoPositions positions;
          if (config_.use_rotary_positional_embeddings) {
            ASSIGN_OR_RETURN(models::RotaryTables tables,
                             RotaryVideoPositions(config_, grid));
            positions.rotary = models::RotaryTables{tables.cos.to(device),
                                                    tables.sin.to(device)};
          } else {
            positions.sincos = SincosVideoPositions(config_, grid).to(device);
          }
          return positions;
        });
  });
}

absl::StatusOr<at::Tensor> CogVideoXTransformer3DModel::Forward(
    const CogVideoXTransformerInputs& inputs) {
  RETURN_IF_ERROR(
      models::CheckHoldsEveryBlock(kModel, blocks_, config_.num_layers));
  ASSIGN_OR_RETURN(const VideoTokenGrid grid, CheckInputs(inputs));
  ASSIGN_OR_RETURN(const VideoPositions positions,
                   PositionsOn(grid, inputs.hidden_states.device()));
  return base::Guarded(absl::StrCat(kModel, " forward"), [&] {
    const Embedded embedded = Embed(inputs, positions);
    const JointTokens x = RunBlocks(embedded.tokens, embedded, std::nullopt);
    return Unpatchify(
        VideoOutput(x.states.slice(1, x.text_tokens), embedded.temb), grid);
  });
}

absl::StatusOr<at::Tensor> CogVideoXTransformer3DModel::ForwardShard(
    const CogVideoXTransformerInputs& inputs,
    const models::SequenceShard& shard) {
  RETURN_IF_ERROR(
      models::CheckHoldsEveryBlock(kModel, blocks_, config_.num_layers));
  ASSIGN_OR_RETURN(const VideoTokenGrid grid, CheckInputs(inputs));
  RETURN_IF_ERROR(
      models::CheckSequenceShard(shard, inputs.hidden_states.size(0)));
  ASSIGN_OR_RETURN(const VideoPositions positions,
                   PositionsOn(grid, inputs.hidden_states.device()));
  return base::Guarded(absl::StrCat(kModel, " sharded forward"), [&] {
    return ForwardShardUnchecked(Embed(inputs, positions), shard);
  });
}

absl::StatusOr<CogVideoXStreams> CogVideoXTransformer3DModel::ForwardStage(
    const CogVideoXTransformerInputs& inputs, const models::TokenSpan& patch,
    bool with_text, const std::optional<CogVideoXStreams>& incoming) {
  ASSIGN_OR_RETURN(const VideoTokenGrid grid, CheckInputs(inputs));
  RETURN_IF_ERROR(models::CheckStageArguments(
      kModel, blocks_, patch, grid.tokens(), incoming.has_value()));
  const int64_t batch = inputs.hidden_states.size(0);
  const int64_t all_text_tokens = inputs.encoder_hidden_states.size(1);
  const int64_t text_tokens = with_text ? all_text_tokens : 0;
  if (incoming.has_value()) {
    absl::Status status =
        models::CheckShape("incoming video stream", incoming->video,
                           {batch, patch.tokens, config_.inner_dim()});
    status.Update(
        models::CheckShape("incoming text stream", incoming->text,
                           {batch, text_tokens, config_.inner_dim()}));
    RETURN_IF_ERROR(status);
  }
  ASSIGN_OR_RETURN(const VideoPositions positions,
                   PositionsOn(grid, inputs.hidden_states.device()));
  return base::Guarded(absl::StrCat(kModel, " stage forward"), [&] {
    Embedded stage;
    stage.temb = TimeEmbedding(inputs);
    at::Tensor text;
    at::Tensor video;
    if (incoming.has_value()) {
      text = incoming->text;
      video = incoming->video;
    } else {
      // The patch embedding is cheap next to the blocks: embed all, keep the
      // patch.
      const at::Tensor joint = patch_embed_->Forward(
          inputs.encoder_hidden_states, inputs.hidden_states, positions.sincos);
      text = joint.narrow(1, 0, text_tokens);
      video = joint.narrow(1, all_text_tokens + patch.begin, patch.tokens);
    }
    stage.tokens = {at::cat({text, video}, /*dim=*/1), text_tokens};
    if (const std::optional<models::RotaryTables>& rotary = positions.rotary;
        rotary.has_value()) {
      stage.rotary =
          JointRotary({rotary->cos.narrow(0, patch.begin, patch.tokens),
                       rotary->sin.narrow(0, patch.begin, patch.tokens)},
                      text_tokens);
    }
    const JointTokens x = RunBlocks(stage.tokens, stage, std::nullopt);
    return CogVideoXStreams{
        .text = x.states.narrow(1, 0, text_tokens),
        .video = x.states.narrow(1, text_tokens, patch.tokens)};
  });
}

absl::StatusOr<at::Tensor> CogVideoXTransformer3DModel::StageOutput(
    const CogVideoXTransformerInputs& inputs, const at::Tensor& video_stream) {
  RETURN_IF_ERROR(CheckInputs(inputs).status());
  RETURN_IF_ERROR(models::CheckStageOutputArguments(
      kModel, blocks_, config_.num_layers, video_stream,
      {inputs.hidden_states.size(0), models::kAnySize, config_.inner_dim()}));
  return base::Guarded(absl::StrCat(kModel, " stage output"), [&] {
    return VideoOutput(video_stream, TimeEmbedding(inputs));
  });
}

at::Tensor CogVideoXTransformer3DModel::TimeEmbedding(
    const CogVideoXTransformerInputs& inputs) {
  return time_embedding_->Forward(
      models::SinusoidalTimestepFeatures(inputs.timestep, config_.inner_dim(),
                                         config_.flip_sin_to_cos,
                                         config_.freq_shift)
          .to(inputs.hidden_states.dtype()));
}

CogVideoXTransformer3DModel::Embedded CogVideoXTransformer3DModel::Embed(
    const CogVideoXTransformerInputs& inputs, const VideoPositions& positions) {
  Embedded embedded;
  embedded.temb = TimeEmbedding(inputs);
  const int64_t text_tokens = inputs.encoder_hidden_states.size(1);
  embedded.tokens = {
      patch_embed_->Forward(inputs.encoder_hidden_states, inputs.hidden_states,
                            positions.sincos),
      text_tokens};
  if (positions.rotary.has_value()) {
    embedded.rotary = JointRotary(*positions.rotary, text_tokens);
  }
  return embedded;
}

JointTokens CogVideoXTransformer3DModel::RunBlocks(
    JointTokens x, const Embedded& embedded,
    const std::optional<at::Tensor>& key_mask) {
  for (CogVideoXBlock& block : transformer_blocks_) {
    x = block->Forward(x, embedded.temb, embedded.rotary, key_mask);
  }
  return x;
}

at::Tensor CogVideoXTransformer3DModel::VideoOutput(
    const at::Tensor& video_tokens, const at::Tensor& temb) {
  return proj_out_->forward(
      norm_out_->Forward(norm_final_->forward(video_tokens), temb));
}

at::Tensor CogVideoXTransformer3DModel::ForwardShardUnchecked(
    const Embedded& embedded, const models::SequenceShard& shard) {
  const at::Tensor& joint = embedded.tokens.states;
  const int64_t text_tokens = embedded.tokens.text_tokens;
  const models::ShardParts split =
      models::SplitShard(shard, {text_tokens, joint.size(1) - text_tokens});
  const models::TokenSpan& text = split.parts[0];
  const models::TokenSpan& video = split.parts[1];
  const int64_t held = text.tokens + video.tokens;
  // A shard of padding alone can begin past the sequence's end (5 tokens
  // over 4 ranks: shards of 2 from 0, 2, 4 and 6), where narrow refuses
  // even an empty cut.
  const int64_t begin = std::min(shard.begin, joint.size(1));
  // The embedding is cheap next to the blocks, so it runs on the whole
  // sequence and the shard is cut after; padding runs as zero tokens.
  Embedded shard_embedded;
  shard_embedded.temb = embedded.temb;
  shard_embedded.tokens = {
      models::PadTokens(joint.narrow(1, begin, held), 0, split.padding),
      text.tokens};
  if (embedded.rotary.has_value()) {
    // Padding rows rotate by nothing, like the text's.
    const auto rows = [&](const at::Tensor& table, double padding_value) {
      return at::cat({table.narrow(0, begin, held),
                      at::full({split.padding, table.size(1)}, padding_value,
                               table.options())});
    };
    shard_embedded.rotary = models::RotaryTables{
        rows(embedded.rotary->cos, 1.0), rows(embedded.rotary->sin, 0.0)};
  }
  const JointTokens x =
      RunBlocks(shard_embedded.tokens, shard_embedded, shard.key_mask);
  const at::Tensor video_output =
      VideoOutput(x.states.narrow(1, text.tokens, video.tokens), embedded.temb);
  return models::PadTokens(video_output, text.tokens, split.padding);
}

at::Tensor CogVideoXTransformer3DModel::Unpatchify(
    const at::Tensor& tokens, const VideoTokenGrid& grid) const {
  const int64_t p = config_.patch_size;
  const int64_t pt = config_.temporal_patch();
  // [B, t, h, w, C, pt, p, p] -> [B, t, pt, C, h, p, w, p].
  return tokens
      .reshape({tokens.size(0), grid.frames, grid.height, grid.width,
                config_.out_channels, pt, p, p})
      .permute({0, 1, 5, 4, 2, 6, 3, 7})
      .reshape({tokens.size(0), grid.frames * pt, config_.out_channels,
                grid.height * p, grid.width * p});
}

absl::StatusOr<std::shared_ptr<CogVideoXTransformer3DModel>>
LoadCogVideoXTransformer3DModel(const std::string& component_dir,
                                std::shared_ptr<models::Attention> attention,
                                const models::Placement& placement,
                                std::optional<models::BlockRange> blocks) {
  ASSIGN_OR_RETURN(
      CogVideoXTransformerConfig config,
      ReadCogVideoXTransformerConfig(component_dir + "/config.json"));
  return models::BuildAndLoad<CogVideoXTransformer3DModel>(
      kModel, component_dir, placement, config, std::move(attention), blocks);
}

}  // namespace ditserve::families
