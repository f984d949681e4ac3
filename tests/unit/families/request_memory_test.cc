#include "core/families/request_memory.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/config/freeze.h"
#include "core/config/model_spec.h"
#include "core/config/parallel_config.h"
#include "core/config/server_options.h"
#include "core/engine/family_registry.h"
#include "core/families/cogvideox/cogvideox_defaults.h"
#include "core/families/flux/flux_defaults.h"
#include "gtest/gtest.h"
#include "tests/support/reference_specs.h"

namespace ditserve::families {
namespace {

using ::ditserve::testing::FullSizeSpec;

// `spec`'s model frozen for `prompts` outputs of width × height (and
// `frames` frames of a video model, `text_tokens` text tokens where set, a
// tiled decode with `vae_tiling`) on one rank.
v1::InputConfig Frozen(const config::ModelSpec& spec, int width, int height,
                       int prompts, int frames = 0, int text_tokens = 0,
                       bool vae_tiling = false) {
  v1::GenerateRequest request;
  for (int i = 0; i < prompts; ++i) request.add_prompt("a lighthouse");
  request.set_width(width);
  request.set_height(height);
  if (frames > 0) request.set_num_frames(frames);
  if (text_tokens > 0) request.set_max_sequence_length(text_tokens);
  request.set_vae_tiling(vae_tiling);
  // PixArt would generate its trained bin instead of the size asked for.
  if (spec.defaults.use_resolution_binning) {
    request.set_use_resolution_binning(false);
  }
  absl::StatusOr<v1::ParallelConfig> parallel =
      config::MakeParallelConfig({}, 1);
  EXPECT_TRUE(parallel.ok()) << parallel.status();
  absl::StatusOr<v1::InputConfig> config =
      config::Freeze(request, spec, config::ServerOptions{}, *parallel, {});
  EXPECT_TRUE(config.ok()) << spec.defaults.name << ": " << config.status();
  return config.ok() ? *config : v1::InputConfig();
}

int64_t RequestBytes(const config::ModelSpec& spec,
                     const v1::InputConfig& config) {
  absl::StatusOr<const Family*> family = engine::FamilyFor(spec.defaults.name);
  EXPECT_TRUE(family.ok()) << family.status();
  return family.ok() ? (*family)->RequestBytes(config, spec) : 0;
}

TEST(RequestMemoryTest, GrowsWithSizeAndOutputsForEveryServedModel) {
  for (const config::ModelDefaults& model : engine::ServedModels()) {
    const config::ModelSpec spec = FullSizeSpec(model);
    const int64_t small = RequestBytes(spec, Frozen(spec, 256, 256, 1));
    const int64_t large = RequestBytes(spec, Frozen(spec, 512, 512, 1));
    const int64_t larger = RequestBytes(spec, Frozen(spec, 768, 768, 1));
    const int64_t two = RequestBytes(spec, Frozen(spec, 768, 768, 2));
    EXPECT_GT(small, 0) << model.name;
    EXPECT_LT(small, large) << model.name;
    EXPECT_LT(large, larger) << model.name;
    EXPECT_LT(larger, two) << model.name;
  }
}

// A preview decodes while the transformer still runs, so with previews the
// estimate holds both peaks at once, not the larger one.
TEST(RequestMemoryTest, PreviewsAddTheDecodeToTheForward) {
  for (const config::ModelDefaults& model : engine::ServedModels()) {
    const config::ModelSpec spec = FullSizeSpec(model);
    const v1::InputConfig plain = model.video() ? Frozen(spec, 720, 480, 1, 49)
                                                : Frozen(spec, 1024, 1024, 1);
    v1::InputConfig previewed = plain;
    previewed.add_partial_image_steps(10);
    const int64_t forward = TransformerForwardBytes(plain, spec);
    const int64_t output = OutputBytes(plain);
    const int64_t alone = RequestBytes(spec, plain);
    const int64_t beside = RequestBytes(spec, previewed);
    EXPECT_GT(beside, alone) << model.name;
    // alone = max(forward, decode) + output; beside = forward + decode +
    // output.
    const int64_t decode = beside - output - forward;
    EXPECT_GT(decode, 0) << model.name;
    EXPECT_EQ(alone - output, std::max(forward, decode)) << model.name;
  }
}

// CogVideoX decodes 2-latent-frame passes (3 for the first of an odd
// count: 9 frames), so a 49-frame video's decode holds 9 frames at once,
// not 49; its VAE has no mid-block attention to add.
TEST(RequestMemoryTest, VideoDecodeHoldsTheFramesOfOnePass) {
  const config::ModelSpec spec = FullSizeSpec(kCogVideoX5bDefaults);
  const v1::InputConfig video = Frozen(spec, 720, 480, 1, 49);
  const int64_t bytes = RequestBytes(spec, video);
  const FullResolutionActivations one{.upsampled = 0, .last_level = 1};
  EXPECT_GE(bytes, VaeDecodeBytes(video, spec, 9, one) + OutputBytes(video));
  EXPECT_LT(bytes, VaeDecodeBytes(video, spec, 49, one) * 10);
}

// CogVideoX 1.5 pads 21 latent frames to 22 for its temporal patches, but
// drops the padding before decoding: the first pass decodes 3 latent
// frames, 9 frames, not the 8 of an even count.
TEST(RequestMemoryTest, CogVideoX15DecodesItsUnpaddedLatentFrames) {
  const config::ModelSpec spec = FullSizeSpec(kCogVideoX15Defaults);
  const v1::InputConfig video = Frozen(spec, 1360, 768, 1, 81);
  ASSERT_EQ(video.shapes().latent_frames(), 22);
  const FullResolutionActivations decoder{.upsampled = 2, .last_level = 11};
  EXPECT_GE(RequestBytes(spec, video),
            VaeDecodeBytes(video, spec, 9, decoder) + OutputBytes(video));
}

// With vae_tiling the decode's activations are one tile's, but every tile
// holds all 49 frames, and the blend keeps two rows of them.
TEST(RequestMemoryTest, TiledVideoDecodeCountsATileAndTwoRowsOfEveryFrame) {
  const config::ModelSpec spec = FullSizeSpec(kCogVideoX5bDefaults);
  const v1::InputConfig whole = Frozen(spec, 720, 480, 1, 49);
  const v1::InputConfig tiled = Frozen(spec, 720, 480, 1, 49, 0, true);
  const FullResolutionActivations one{.upsampled = 0, .last_level = 1};
  // 240x360 tiles: a quarter of 720x480.
  const int64_t two_rows = int64_t{2} * 240 * 2 * (720 + 360) * 49 * 3 * 4;
  EXPECT_EQ(VaeDecodeBytes(tiled, spec, 9, one),
            VaeDecodeBytes(whole, spec, 9, one) / 4 + two_rows);
  EXPECT_LT(RequestBytes(spec, tiled), RequestBytes(spec, whole));
}

// `model`'s released spec with a random checkpoint's widths.
config::ModelSpec RandomCheckpointSpec(const config::ModelDefaults& model,
                                       int heads, int head_dim,
                                       std::vector<int> vae_widths) {
  config::ModelSpec spec = FullSizeSpec(model);
  spec.num_attention_heads = heads;
  spec.attention_head_dim = head_dim;
  spec.vae_block_out_channels = std::move(vae_widths);
  return spec;
}
config::ModelSpec TinyFlux() {
  return RandomCheckpointSpec(kFluxDevDefaults, 4, 16, {16, 16, 32, 32});
}
config::ModelSpec SmallFlux() {
  return RandomCheckpointSpec(kFluxDevDefaults, 8, 32, {32, 64, 64, 64});
}

// Peak resident memory of one forward of the `small` checkpoint's
// transformer with 64 text tokens above that of loading it (maxrss of
// ditserve-bench-compare-worker given one "forward" command, 2 threads,
// minus that given none), in kB: the estimate must cover each without being
// more than twice it.
TEST(RequestMemoryTest, TransformerCoversTheForwardsMeasuredOnRandomFlux) {
  const config::ModelSpec small = SmallFlux();
  for (const auto& [size, kilobytes] :
       {std::pair{512, 45344}, std::pair{1024, 361004},
        std::pair{2048, 642816}}) {
    const int64_t estimate = TransformerForwardBytes(
        Frozen(small, size, size, 1, 0, /*text_tokens=*/64), small);
    EXPECT_GE(estimate, int64_t{kilobytes} << 10) << size;
    EXPECT_LE(estimate, int64_t{2 * kilobytes} << 10) << size;
  }
}

// Peaks of the host's resident memory above its idle (VmHWM after one
// request minus VmHWM before it) for one-step flux-dev requests on one rank
// (ditserve-host --threads=2, a 64² warm-up request, then ditctl generate
// --steps 1, PNG out: `bench/request_peak_memory --preset tiny|small SIZE`,
// the largest of its runs) with the random `tiny` and `small` checkpoints,
// which differ in transformer and VAE widths; at 2048² also with
// --vae_tiling (tiles of 1024², sample_size 1024). The estimate must cover
// each without being more than twice it.
TEST(RequestMemoryTest, CoversThePeaksMeasuredOnRandomFluxCheckpoints) {
  const config::ModelSpec tiny = TinyFlux();
  const config::ModelSpec small = SmallFlux();
  struct Measured {
    const config::ModelSpec* spec;
    int size;
    int prompts;
    int64_t kilobytes;
    bool vae_tiling = false;
  };
  // VmHWM differences in kB.
  for (const Measured& measured : {
           Measured{&tiny, 1024, 1, 460688},
           Measured{&tiny, 1024, 4, 479012},
           Measured{&tiny, 1536, 1, 893032},
           Measured{&tiny, 2048, 1, 1471964},
           Measured{&small, 1024, 1, 1044772},
           Measured{&small, 1536, 1, 2306916},
           Measured{&small, 2048, 1, 5605952},
           Measured{&small, 2048, 1, 1864740, /*vae_tiling=*/true},
       }) {
    const int64_t estimate = RequestBytes(
        *measured.spec, Frozen(*measured.spec, measured.size, measured.size,
                               measured.prompts, 0, 0, measured.vae_tiling));
    const std::string what = (measured.spec == &tiny ? "tiny " : "small ") +
                             std::to_string(measured.size) + "² × " +
                             std::to_string(measured.prompts) +
                             (measured.vae_tiling ? " tiled" : "");
    EXPECT_GE(estimate, measured.kilobytes << 10) << what;
    EXPECT_LE(estimate, 2 * (measured.kilobytes << 10)) << what;
  }
}

// The same for one-step videos of the random `small` CogVideoX-5b
// checkpoint (guidance 1), whose 9 frames are one decoder pass. The 720×480
// rows are the largest of runs of `bench/request_peak_memory --family
// cogvideox-5b 720x480 --guidance 1 --format rgb8 --frames F
// [--vae_tiling]`: whole, 9 frames, five runs (one with --format mp4) from
// 3 367 248 to 4 816 968 kB; tiled, one run each. The 480×320 row is an earlier
// measurement, without the warm-up request.
TEST(RequestMemoryTest, CoversThePeaksMeasuredOnRandomCogVideoX) {
  const config::ModelSpec small =
      RandomCheckpointSpec(kCogVideoX5bDefaults, 8, 32, {32, 32, 64, 64});
  struct Measured {
    int width;
    int height;
    int frames;
    bool vae_tiling;
    int64_t kilobytes;
  };
  for (const Measured& measured : {
           Measured{720, 480, 9, false, 4816968},
           Measured{480, 320, 9, false, 1456996},
           Measured{720, 480, 9, true, 1098672},
           Measured{720, 480, 49, true, 1710000},
       }) {
    const int64_t estimate =
        RequestBytes(small, Frozen(small, measured.width, measured.height, 1,
                                   measured.frames, 0, measured.vae_tiling));
    const std::string what =
        absl::StrCat(measured.width, "x", measured.height, " × ",
                     measured.frames, measured.vae_tiling ? " tiled" : "");
    EXPECT_GE(estimate, measured.kilobytes << 10) << what;
    EXPECT_LE(estimate, 2 * (measured.kilobytes << 10)) << what;
  }
}

}  // namespace
}  // namespace ditserve::families
