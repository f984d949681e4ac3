#include "core/models/vae/autoencoder_kl.h"

#include <torch/torch.h>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/models/tensor_checks.h"

namespace ditserve::models {

AutoencoderKL::AutoencoderKL(const AutoencoderKLConfig& config)
    : config_(config) {
  const int64_t latent = config.latent_channels;
  const int64_t groups = config.norm_num_groups;
  const std::vector<int64_t>& channels = config.block_out_channels;
  if (config.use_post_quant_conv) {
    post_quant_conv_ = register_module(
        "post_quant_conv", Conv2d(torch::nn::Conv2dOptions(latent, latent, 1)));
  }
  auto decoder =
      register_module("decoder", std::make_shared<torch::nn::Module>());
  conv_in_ =
      decoder->register_module("conv_in", Conv3x3(latent, channels.back()));
  mid_block_ = decoder->register_module(
      "mid_block",
      UNetMidBlock2D(channels.back(), groups, config.mid_block_add_attention));
  torch::nn::ModuleList up_blocks;
  // Up blocks run from the widest channels back to the first entry.
  int64_t previous = channels.back();
  for (size_t i = 0; i < channels.size(); ++i) {
    const int64_t out = channels[channels.size() - 1 - i];
    const bool last = i + 1 == channels.size();
    up_blocks_.push_back(UpDecoderBlock2D(previous, out,
                                          config.layers_per_block + 1, groups,
                                          /*add_upsample=*/!last));
    up_blocks->push_back(up_blocks_.back());
    previous = out;
  }
  decoder->register_module("up_blocks", up_blocks);
  conv_norm_out_ = decoder->register_module(
      "conv_norm_out", VaeGroupNorm(groups, channels.front()));
  conv_out_ = decoder->register_module(
      "conv_out", Conv3x3(channels.front(), config.out_channels));
}

bool AutoencoderKL::HoldsTensor(absl::string_view name) const {
  return absl::StartsWith(name, "decoder.") ||
         (config_.use_post_quant_conv &&
          absl::StartsWith(name, "post_quant_conv."));
}

absl::StatusOr<at::Tensor> AutoencoderKL::Decode(const at::Tensor& z) {
  RETURN_IF_ERROR(CheckShape(
      "z", z, {kAnySize, config_.latent_channels, kAnySize, kAnySize}));
  return base::Guarded("AutoencoderKL decode failed",
                       [&] { return DecodeUnchecked(z); });
}

absl::StatusOr<at::Tensor> AutoencoderKL::DecodeTiled(const at::Tensor& z) {
  ASSIGN_OR_RETURN(DecodeTiles tiles, AutoencoderKLTiles(config_));
  return DecodeTiled(z, tiles);
}

absl::StatusOr<at::Tensor> AutoencoderKL::DecodeTiled(
    const at::Tensor& z, const DecodeTiles& tiles) {
  RETURN_IF_ERROR(CheckShape(
      "z", z, {kAnySize, config_.latent_channels, kAnySize, kAnySize}));
  return base::Guarded("AutoencoderKL tiled decode failed", [&] {
    if (!NeedsTiles(tiles, z)) return DecodeUnchecked(z);
    return DecodeInTiles(z, tiles, [this](const at::Tensor& tile) {
      return DecodeUnchecked(tile);
    });
  });
}

at::Tensor AutoencoderKL::DecodeUnchecked(const at::Tensor& z) {
  at::Tensor h = post_quant_conv_ ? post_quant_conv_->forward(z) : z;
  // Channels-last activations let oneDNN's float32 convolutions, most of a
  // CPU decode, run without reordering their input and output every call
  // (bench/compare_diffusers: vae_decode). Other dtypes and devices keep the
  // layout their tolerances were measured with.
  if (h.device().is_cpu() && h.scalar_type() == at::kFloat) {
    h = h.contiguous(at::MemoryFormat::ChannelsLast);
  }
  h = mid_block_->Forward(conv_in_->forward(h));
  for (UpDecoderBlock2D& block : up_blocks_) h = block->Forward(h);
  h = conv_norm_out_->forward(h);
  return conv_out_->forward(at::silu_(h)).contiguous();
}

absl::StatusOr<DecodeTiles> AutoencoderKLTiles(
    const AutoencoderKLConfig& config) {
  constexpr double kOverlap = 0.25;
  return TilesForSample(config.sample_size, config.sample_size, kOverlap,
                        kOverlap, config.scale_factor());
}

absl::StatusOr<std::shared_ptr<AutoencoderKL>> LoadAutoencoderKL(
    const std::string& component_dir, const Placement& placement) {
  ASSIGN_OR_RETURN(AutoencoderKLConfig config,
                   ReadAutoencoderKLConfig(component_dir + "/config.json"));
  auto model = std::make_shared<AutoencoderKL>(config);
  absl::Status loaded = LoadComponentWeights(
      *model, component_dir, placement,
      [&model](absl::string_view name) { return model->HoldsTensor(name); });
  if (!loaded.ok()) return loaded;
  model->eval();
  return model;
}

}  // namespace ditserve::models
