#include "core/families/request_memory.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/models/layers/attention.h"

namespace ditserve::families {
namespace {

constexpr int64_t kFloatBytes = 4;

// Hidden-width float32 tensors per token alive at once in a block: FLUX's
// single-stream block holds its input, q, k, v, the attention output, the
// 4×-wide MLP activation before and after GELU, their concatenation and its
// projection (about 19); forwards of the random `small` FLUX measured 23 to
// 43 with the allocator's slack (tests/unit/families/request_memory_test.cc).
constexpr int64_t kHiddenStatesAlive = 40;

// Per pixel of each output frame: float32 RGB, RGB8, and the PNG (or video
// frame) with its copies in the response and its serialised message.
constexpr int64_t kOutputBytesPerPixel = 4 * 3 + 3 + 3 * 3;

// Channels per full-resolution pixel `alive` in a decoder of `spec`'s VAE
// widths.
int64_t FullResolutionChannels(const config::ModelSpec& spec,
                               const FullResolutionActivations& alive) {
  const std::vector<int>& widths = spec.vae_block_out_channels;
  if (widths.empty()) return 0;
  const int64_t upsampled = widths.size() > 1 ? widths[1] : widths[0];
  return alive.upsampled * upsampled + alive.last_level * widths[0];
}

// The generated height and width, or with vae_tiling the part of them one
// tile decodes.
std::pair<int64_t, int64_t> DecodedAtOnce(const v1::InputConfig& config,
                                          const config::ModelSpec& spec) {
  int64_t height = config.shapes().generated_height();
  int64_t width = config.shapes().generated_width();
  if (config.vae_tiling()) {
    height = std::min<int64_t>(height, spec.vae_tile_height);
    width = std::min<int64_t>(width, spec.vae_tile_width);
  }
  return {height, width};
}

// The decoded RGB tiles of two rows, every frame of them, that a tiled
// decode keeps for its blend: a row's tiles span at most twice the width
// and a tile more, since each steps at least half a tile.
int64_t TileRowsBytes(const v1::InputConfig& config,
                      const config::ModelSpec& spec) {
  if (!config.vae_tiling()) return 0;
  constexpr int64_t kRgb = 3;
  const int64_t row_width =
      2 * (int64_t{config.shapes().generated_width()} + spec.vae_tile_width);
  return 2 * int64_t{spec.vae_tile_height} * row_width * config.num_frames() *
         kRgb * kFloatBytes;
}

int64_t ScoreBytes(int64_t rows, int64_t heads, int64_t queries, int64_t keys) {
  return std::min(models::kMaxScoreBytes,
                  rows * heads * queries * keys * kFloatBytes);
}

}  // namespace

int64_t TransformerForwardBytes(const v1::InputConfig& config,
                                const config::ModelSpec& spec) {
  const v1::DerivedShapes& shapes = config.shapes();
  const int64_t rows =
      int64_t{shapes.max_batch_per_dp_group()} * shapes.branches_per_cfg_rank();
  const int64_t tokens = shapes.padded_sequence_tokens();
  return rows * tokens * spec.hidden_size() * kFloatBytes * kHiddenStatesAlive +
         ScoreBytes(rows, spec.num_attention_heads, tokens, tokens);
}

int64_t VaeDecodeBytes(const v1::InputConfig& config,
                       const config::ModelSpec& spec, int64_t frames,
                       const FullResolutionActivations& alive) {
  const auto [height, width] = DecodedAtOnce(config, spec);
  return frames * height * width * FullResolutionChannels(spec, alive) *
             kFloatBytes +
         TileRowsBytes(config, spec);
}

int64_t VaeAttentionBytes(const v1::InputConfig& config,
                          const config::ModelSpec& spec) {
  int64_t height = config.shapes().latent_height();
  int64_t width = config.shapes().latent_width();
  if (config.vae_tiling()) {
    height =
        std::min<int64_t>(height, spec.vae_tile_height / spec.vae_scale_factor);
    width =
        std::min<int64_t>(width, spec.vae_tile_width / spec.vae_scale_factor);
  }
  return ScoreBytes(1, 1, height * width, height * width);
}

int64_t ForwardAndDecodePeakBytes(const v1::InputConfig& config,
                                  int64_t forward, int64_t decode) {
  return config.partial_image_steps_size() > 0 ? forward + decode
                                               : std::max(forward, decode);
}

int64_t OutputBytes(const v1::InputConfig& config) {
  const int64_t pixels = int64_t{config.shapes().generated_height()} *
                         config.shapes().generated_width();
  return int64_t{config.prompt_size()} * config.num_frames() * pixels *
         kOutputBytesPerPixel;
}

}  // namespace ditserve::families
