#include "core/config/derived_shapes.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/config/aspect_ratio_bins.h"
#include "core/config/field_error.h"
#include "core/config/model_defaults.h"
#include "core/config/parallel_config.h"

namespace ditserve::config {
namespace {

// The pixels the model generates: with use_resolution_binning the bin of
// spec.sample_size's table nearest the requested aspect ratio, else
// height × width.
absl::StatusOr<ImageSize> GeneratedSize(const v1::InputConfig& config,
                                        const ModelSpec& spec) {
  const ImageSize requested{config.height(), config.width()};
  if (!config.use_resolution_binning()) return requested;
  absl::StatusOr<std::vector<AspectRatioBin>> bins =
      AspectRatioBinsForSampleSize(spec.sample_size);
  if (!bins.ok()) {
    return InvalidField(
        "use_resolution_binning",
        absl::StrCat("use_resolution_binning true: ", bins.status().message(),
                     "; request use_resolution_binning false"));
  }
  return NearestAspectRatioBin(requested, *bins);
}

}  // namespace

SequenceSplit SplitSequence(int tokens, int degree) {
  SequenceSplit split;
  split.shard_tokens = (tokens + degree - 1) / degree;
  split.padded_tokens = split.shard_tokens * degree;
  split.padding_tokens = split.padded_tokens - tokens;
  return split;
}

PipeFusionShard PipeFusionShardOf(int tokens, int degree, int index) {
  PipeFusionShard shard;
  shard.tokens = SplitSequence(tokens, degree).shard_tokens;
  shard.begin = std::min(index * shard.tokens, tokens - shard.tokens);
  shard.owned_begin = std::min(index * shard.tokens, tokens);
  shard.owned_end = std::min(shard.owned_begin + shard.tokens, tokens);
  return shard;
}

std::vector<int> EvenOffsets(int items, int count) {
  std::vector<int> offsets{0};
  const int base = items / count;
  const int larger = items % count;
  for (int i = 0; i < count; ++i) {
    offsets.push_back(offsets.back() + base + (i < larger ? 1 : 0));
  }
  return offsets;
}

LatentFrames LatentFramesOf(int num_frames, int temporal_compression,
                            int temporal_patch) {
  LatentFrames frames;
  frames.unpadded = (num_frames - 1) / temporal_compression + 1;
  frames.padded =
      (frames.unpadded + temporal_patch - 1) / temporal_patch * temporal_patch;
  return frames;
}

absl::StatusOr<v1::DerivedShapes> DeriveShapes(const v1::InputConfig& config,
                                               const ModelSpec& spec) {
  const ModelDefaults& defaults = spec.defaults;
  const v1::ParallelConfig& parallel = config.parallel();
  v1::DerivedShapes shapes;
  ASSIGN_OR_RETURN(ImageSize generated, GeneratedSize(config, spec));
  shapes.set_generated_height(static_cast<int>(generated.height));
  shapes.set_generated_width(static_cast<int>(generated.width));
  shapes.set_latent_height(shapes.generated_height() / spec.vae_scale_factor);
  shapes.set_latent_width(shapes.generated_width() / spec.vae_scale_factor);
  shapes.set_latent_channels(spec.latent_channels);
  shapes.set_patch_size(spec.patch_size);
  const LatentFrames latent_frames = LatentFramesOf(
      config.num_frames(), spec.temporal_compression, spec.temporal_patch);
  shapes.set_latent_frames(latent_frames.padded);
  const int token_frames = shapes.latent_frames() / spec.temporal_patch;
  if (defaults.video()) shapes.add_image_latent_shape(latent_frames.padded);
  for (const int size :
       {spec.latent_channels, shapes.latent_height(), shapes.latent_width()}) {
    shapes.add_image_latent_shape(size);
  }
  // Rows of patches over every token frame: PipeFusion patches are whole
  // rows, and a video's tokens run frame after frame.
  const int patch_rows =
      token_frames * (shapes.latent_height() / spec.patch_size);
  const int patch_cols = shapes.latent_width() / spec.patch_size;
  shapes.set_image_tokens(patch_rows * patch_cols);
  shapes.set_text_tokens(defaults.clip_sequence_tokens +
                         config.max_sequence_length());
  shapes.set_sequence_tokens(shapes.image_tokens() + (defaults.joint_attention
                                                          ? shapes.text_tokens()
                                                          : 0));

  const SequenceSplit split =
      SplitSequence(shapes.sequence_tokens(), SequenceParallelDegree(parallel));
  shapes.set_padded_sequence_tokens(split.padded_tokens);
  shapes.set_sequence_padding_tokens(split.padding_tokens);
  shapes.set_shard_tokens(split.shard_tokens);

  if (patch_rows < parallel.num_pipeline_patch() && token_frames > 1) {
    return WithFields(
        absl::InvalidArgumentError(absl::StrCat(
            "num_frames ", config.num_frames(), " at height ", config.height(),
            " gives ", patch_rows,
            " patch rows, fewer than the server's num_pipeline_patch ",
            parallel.num_pipeline_patch())),
        {"num_frames", "height"});
  }
  if (patch_rows < parallel.num_pipeline_patch() &&
      config.use_resolution_binning()) {
    // Binning picked the generated size by aspect ratio: a taller request
    // may bin to the same height.
    return WithFields(
        absl::InvalidArgumentError(absl::StrCat(
            "height ", config.height(), " at width ", config.width(),
            " is generated at height ", shapes.generated_height(),
            " (use_resolution_binning), which gives ", patch_rows,
            " patch rows, fewer than the server's num_pipeline_patch ",
            parallel.num_pipeline_patch(),
            "; ask for a shape nearer square, or turn binning off")),
        {"height", "width", "use_resolution_binning"});
  }
  if (patch_rows < parallel.num_pipeline_patch()) {
    return InvalidField(
        "height",
        absl::StrCat("height ", config.height(), " gives ", patch_rows,
                     " patch rows, fewer than the server's num_pipeline_patch ",
                     parallel.num_pipeline_patch(), "; use height ≥ ",
                     parallel.num_pipeline_patch() * spec.size_multiple()));
  }
  for (const int row : EvenOffsets(patch_rows, parallel.num_pipeline_patch())) {
    shapes.add_pipefusion_patch_token_offsets(row * patch_cols);
  }

  const std::vector<int> dp_offsets =
      EvenOffsets(config.prompt_size(), parallel.dp_degree());
  int max_batch = 0;
  for (size_t g = 0; g < dp_offsets.size(); ++g) {
    shapes.add_dp_group_prompt_offsets(dp_offsets[g]);
    if (g > 0)
      max_batch = std::max(max_batch, dp_offsets[g] - dp_offsets[g - 1]);
  }
  shapes.set_max_batch_per_dp_group(max_batch);

  const int branches = config.do_classifier_free_guidance() ? 2 : 1;
  if (branches % parallel.cfg_degree() != 0) {
    return InvalidField(
        "guidance_scale",
        absl::StrCat(
            "guidance_scale ", config.guidance_scale(),
            " turns classifier-free guidance off, but the server runs "
            "cfg_degree ",
            parallel.cfg_degree(),
            " (one rank per guidance branch); use guidance_scale > 1"));
  }
  shapes.set_guidance_branches(branches);
  shapes.set_branches_per_cfg_rank(branches / parallel.cfg_degree());
  return shapes;
}

}  // namespace ditserve::config
