// PixArt-Σ and SD3 as a user meets them: tiny random checkpoints served by
// real ditserve-host and ditserve-worker processes on loopback. World 1
// returns images of the requested size; CFG parallel (each of two ranks runs
// one guidance branch), data parallel, sequence parallel (Ulysses, Ring,
// both) and their compositions give the single-rank latents, also for a
// batch of prompts.

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/config/model_defaults.h"
#include "core/families/pixart/pixart_defaults.h"
#include "core/families/sd3/sd3_defaults.h"
#include "core/io/image.h"
#include "gtest/gtest.h"
#include "tests/integration/serving/tiny_model_cluster.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::LatentFloats;
using ::ditserve::local_cluster::RgbPsnr;
using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::SmallRequest;
using ::ditserve::local_cluster::TransformerBytes;

constexpr double kCallSeconds = 300;
// A parallel layout against the single-rank latents, relative to the largest
// latent magnitude. The layouts run the same float32 operations on the same
// inputs, except that each rank's transformer sees a smaller batch (one
// guidance branch, one dp group's prompts) or a shard of the sequence
// (attention sums merged by all-to-all or log-sum-exp), and CPU matrix
// kernels may round a row differently by the batch it sits in. DPM-Solver++
// (PixArt) divides the first step's clean-sample estimate by
// sqrt(alpha_bar) ≈ 0.0066 at t = 999, which scales both that rounding and
// the latents (hundreds) up. Measured: at most 4.3e-4 on latents up to 5.8e2
// (PixArt-Σ), 7e-6 on latents up to 5 (SD3), i.e. under 2e-6 relative; a
// wrong branch, seed, prompt, shard or unmasked padded key changes latents by
// far more.
constexpr float kRelativeTolerance = 1e-5F;
// The patch pipeline (pp 2, 1 warm-up step of 4) against a single rank,
// 8-bit RGB. Measured: 72.6 dB (PixArt-Σ), 68.1 dB (SD3). The bound is
// FLUX's (45 dB): patches that attended to zeros, to the wrong rows or only
// to themselves lose far more.
constexpr double kMinPatchPipelinePsnrDb = 45;

const std::vector<std::string>& Prompts() {
  static const std::vector<std::string>* const kPrompts =
      new std::vector<std::string>{"a lighthouse at dusk", "a fox in the snow",
                                   "an old bridge over a river"};
  return *kPrompts;
}

// The test name of a served family.
std::string FamilyName(const config::ModelDefaults& model) {
  return model.name == families::kPixArtSigmaDefaults.name ? "PixArtSigma"
                                                           : "Sd3Medium";
}

float MaxAbsDifference(const std::vector<float>& a,
                       const std::vector<float>& b) {
  float largest = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    largest = std::max(largest, std::abs(a[i] - b[i]));
  }
  return largest;
}

// Latents of `prompts` (each with a negative prompt, so the guidance
// branches differ), the first image seeded with `seed`.
v1::GenerateRequest LatentRequest(const std::vector<std::string>& prompts,
                                  uint64_t seed) {
  v1::GenerateRequest request = SmallRequest(prompts.front());
  for (size_t i = 1; i < prompts.size(); ++i) request.add_prompt(prompts[i]);
  for (size_t i = 0; i < prompts.size(); ++i) {
    request.add_negative_prompt("blurry, low quality");
  }
  request.set_seed(seed);
  request.set_use_resolution_binning(false);
  request.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
  return request;
}

// Expects image i of `response` to be `references[i]` within tolerance.
void ExpectLatents(const v1::GenerateResponse& response,
                   const std::vector<std::vector<float>>& references,
                   const std::string& layout) {
  ASSERT_EQ(response.images_size(), static_cast<int>(references.size()))
      << layout;
  for (size_t i = 0; i < references.size(); ++i) {
    const std::vector<float> values = LatentFloats(response.images(i));
    ASSERT_EQ(values.size(), references[i].size()) << layout << " image " << i;
    const float difference = MaxAbsDifference(values, references[i]);
    const float scale = std::max(
        1.0F, MaxAbsDifference(references[i],
                               std::vector<float>(values.size(), 0.0F)));
    // The measured error, for the record of the tolerance.
    std::cout << layout << " image " << i
              << ": max |latent - world 1| = " << difference
              << ", largest |latent| " << scale << "\n";
    EXPECT_LE(difference, kRelativeTolerance * scale)
        << layout << " image " << i;
  }
}

class CfgServingTest : public ::testing::TestWithParam<config::ModelDefaults> {
 protected:
  void SetUp() override { model_dir_ = TinyCheckpoint(GetParam()); }

  std::unique_ptr<ServingCluster> Start(int world_size,
                                        std::vector<std::string> flags) {
    return StartCluster(model_dir_, world_size, std::move(flags));
  }

  std::string model_dir_;
};

TEST_P(CfgServingTest, ParallelLayoutsServeTheSingleRankImages) {
  std::vector<std::vector<float>> references;
  {
    SCOPED_TRACE("world 1");
    std::unique_ptr<ServingCluster> cluster = Start(1, {});
    ASSERT_NE(cluster, nullptr);
    // PNGs of the requested size, through resolution binning where the
    // family bins.
    v1::GenerateRequest png = SmallRequest(Prompts()[0]);
    png.add_prompt(Prompts()[1]);
    absl::StatusOr<v1::GenerateResponse> images =
        cluster->Generate(png, kCallSeconds);
    ASSERT_TRUE(images.ok()) << images.status();
    ASSERT_EQ(images->images_size(), 2);
    for (const v1::Image& image : images->images()) {
      EXPECT_EQ(image.mime_type(), "image/png");
      absl::StatusOr<at::Tensor> pixels = io::DecodePng(image.data());
      ASSERT_TRUE(pixels.ok()) << pixels.status();
      EXPECT_EQ(pixels->size(0), 64);
      EXPECT_EQ(pixels->size(1), 48);
    }
    EXPECT_NE(images->images(0).data(), images->images(1).data());
    // Each prompt alone, seeded as it is in the batch below.
    for (size_t i = 0; i < Prompts().size(); ++i) {
      absl::StatusOr<v1::GenerateResponse> single =
          cluster->Generate(LatentRequest({Prompts()[i]}, 7 + i), kCallSeconds);
      ASSERT_TRUE(single.ok()) << single.status();
      ASSERT_EQ(single->images_size(), 1);
      references.push_back(LatentFloats(single->images(0)));
    }
    EXPECT_NE(references[0], references[1]);
  }
  // Data parallel alone: three prompts over two groups (two and one), and
  // over four groups, one of which has no prompt and only follows the steps.
  for (int dp : {2, 4}) {
    const std::string layout = absl::StrCat("dp ", dp, ", batch of 3");
    SCOPED_TRACE(layout);
    std::unique_ptr<ServingCluster> cluster =
        Start(dp, {absl::StrCat("--dp_degree=", dp)});
    ASSERT_NE(cluster, nullptr);
    absl::StatusOr<v1::GenerateResponse> batch =
        cluster->Generate(LatentRequest(Prompts(), 7), kCallSeconds);
    ASSERT_TRUE(batch.ok()) << batch.status();
    ExpectLatents(*batch, references, layout);
  }
  {
    SCOPED_TRACE("world 2, cfg 2");
    std::unique_ptr<ServingCluster> cluster = Start(2, {"--cfg_degree=2"});
    ASSERT_NE(cluster, nullptr);
    absl::StatusOr<v1::GenerateResponse> single =
        cluster->Generate(LatentRequest({Prompts()[0]}, 7), kCallSeconds);
    ASSERT_TRUE(single.ok()) << single.status();
    EXPECT_EQ(single->config().shapes().branches_per_cfg_rank(), 1);
    ExpectLatents(*single, {references[0]}, "cfg 2");
    absl::StatusOr<v1::GenerateResponse> batch =
        cluster->Generate(LatentRequest(Prompts(), 7), kCallSeconds);
    ASSERT_TRUE(batch.ok()) << batch.status();
    ExpectLatents(*batch, references, "cfg 2, batch of 3");
  }
  {
    SCOPED_TRACE("world 4, dp 2 x cfg 2");
    std::unique_ptr<ServingCluster> cluster =
        Start(4, {"--dp_degree=2", "--cfg_degree=2"});
    ASSERT_NE(cluster, nullptr);
    // Three prompts over two dp groups: two in one, one in the other.
    absl::StatusOr<v1::GenerateResponse> batch =
        cluster->Generate(LatentRequest(Prompts(), 7), kCallSeconds);
    ASSERT_TRUE(batch.ok()) << batch.status();
    ExpectLatents(*batch, references, "dp 2 x cfg 2, batch of 3");
    // One prompt: the second dp group has none and only follows the steps.
    absl::StatusOr<v1::GenerateResponse> single =
        cluster->Generate(LatentRequest({Prompts()[0]}, 7), kCallSeconds);
    ASSERT_TRUE(single.ok()) << single.status();
    ExpectLatents(*single, {references[0]}, "dp 2 x cfg 2, one prompt");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Families, CfgServingTest,
    ::testing::Values(families::kPixArtSigmaDefaults,
                      families::kSD3MediumDefaults),
    [](const ::testing::TestParamInfo<config::ModelDefaults>& info) {
      return FamilyName(info.param);
    });

// Sequence parallelism (alone, with data parallel, with CFG parallel):
// every layout of world 2 and 4 with ulysses or ring above 1.
struct SequenceLayout {
  config::ModelDefaults model = families::kPixArtSigmaDefaults;
  int dp = 1;
  int cfg = 1;
  int ulysses = 1;
  int ring = 1;

  int world() const { return dp * cfg * ulysses * ring; }
  std::string Name() const {
    return absl::StrCat(FamilyName(model), "_dp", dp, "_cfg", cfg, "_ulysses",
                        ulysses, "_ring", ring);
  }
};

void PrintTo(const SequenceLayout& layout, std::ostream* out) {
  *out << layout.Name();
}

// Three prompts of 80×48 pixels: 5×3 = 15 image tokens, the whole sequence
// of PixArt (which cross-attends to the caption), and with 77 CLIP + 31 T5
// text tokens 123 for SD3. Neither is a multiple of 2 or 4, so every layout
// pads the sequence and masks the padding; the image is not square.
v1::GenerateRequest SequenceRequest() {
  v1::GenerateRequest request = LatentRequest(Prompts(), 7);
  request.set_height(80);
  request.set_width(48);
  request.set_max_sequence_length(31);
  return request;
}

class CfgSequenceParallelTest
    : public ::testing::TestWithParam<SequenceLayout> {};

TEST_P(CfgSequenceParallelTest, LatentsEqualASingleRanksWithinTolerance) {
  const SequenceLayout& layout = GetParam();
  const std::string model_dir = TinyCheckpoint(layout.model);
  ASSERT_FALSE(model_dir.empty());
  const v1::GenerateRequest request = SequenceRequest();
  std::vector<std::vector<float>> references;
  {
    std::unique_ptr<ServingCluster> cluster = StartCluster(model_dir, 1, {});
    ASSERT_NE(cluster, nullptr);
    absl::StatusOr<v1::GenerateResponse> single =
        cluster->Generate(request, kCallSeconds);
    ASSERT_TRUE(single.ok()) << single.status();
    for (const v1::Image& image : single->images()) {
      references.push_back(LatentFloats(image));
    }
  }
  std::unique_ptr<ServingCluster> cluster =
      StartCluster(model_dir, layout.world(),
                   {absl::StrCat("--dp_degree=", layout.dp),
                    absl::StrCat("--cfg_degree=", layout.cfg),
                    absl::StrCat("--ulysses_degree=", layout.ulysses),
                    absl::StrCat("--ring_degree=", layout.ring)});
  ASSERT_NE(cluster, nullptr);
  absl::StatusOr<v1::GenerateResponse> split =
      cluster->Generate(request, kCallSeconds);
  ASSERT_TRUE(split.ok()) << split.status();

  const v1::DerivedShapes& shapes = split->config().shapes();
  const int sp = layout.ulysses * layout.ring;
  const bool sd3 = layout.model.name == families::kSD3MediumDefaults.name;
  EXPECT_EQ(shapes.sequence_tokens(), sd3 ? 123 : 15);
  EXPECT_EQ(shapes.padded_sequence_tokens(), sd3 ? 124 : 16);
  EXPECT_EQ(shapes.shard_tokens(), shapes.padded_sequence_tokens() / sp);
  ExpectLatents(*split, references, layout.Name());
}

std::vector<SequenceLayout> SequenceLayouts() {
  std::vector<SequenceLayout> layouts;
  for (const config::ModelDefaults& model :
       {families::kPixArtSigmaDefaults, families::kSD3MediumDefaults}) {
    for (SequenceLayout layout :
         {SequenceLayout{.ulysses = 2}, SequenceLayout{.ring = 2},
          SequenceLayout{.ulysses = 4}, SequenceLayout{.ring = 4},
          SequenceLayout{.ulysses = 2, .ring = 2},
          SequenceLayout{.dp = 2, .ulysses = 2},
          SequenceLayout{.dp = 2, .ring = 2},
          SequenceLayout{.cfg = 2, .ulysses = 2},
          SequenceLayout{.cfg = 2, .ring = 2}}) {
      layout.model = model;
      layouts.push_back(layout);
    }
  }
  return layouts;
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, CfgSequenceParallelTest, ::testing::ValuesIn(SequenceLayouts()),
    [](const ::testing::TestParamInfo<SequenceLayout>& info) {
      return info.param.Name();
    });

// PipeFusion: the tiny checkpoints' two blocks on two stages, alone and
// with data, CFG or sequence parallel on four ranks, and with two of them on
// eight.
struct PipeFusionLayout {
  config::ModelDefaults model = families::kPixArtSigmaDefaults;
  int dp = 1;
  int cfg = 1;
  int ulysses = 1;
  int ring = 1;

  int sp() const { return ulysses * ring; }
  int world() const { return dp * cfg * kStages * sp(); }
  std::string Name() const {
    std::string name =
        absl::StrCat(FamilyName(model), "_dp", dp, "_cfg", cfg, "_pp", kStages);
    if (ulysses > 1) absl::StrAppend(&name, "_ulysses", ulysses);
    if (ring > 1) absl::StrAppend(&name, "_ring", ring);
    return name;
  }

  static constexpr int kStages = 2;
};

void PrintTo(const PipeFusionLayout& layout, std::ostream* out) {
  *out << layout.Name();
}

std::vector<std::string> PipeFusionFlags(const PipeFusionLayout& layout,
                                         int warmup_steps) {
  return {absl::StrCat("--dp_degree=", layout.dp),
          absl::StrCat("--cfg_degree=", layout.cfg),
          absl::StrCat("--pipefusion_degree=", PipeFusionLayout::kStages),
          absl::StrCat("--ulysses_degree=", layout.ulysses),
          absl::StrCat("--ring_degree=", layout.ring),
          absl::StrCat("--warmup_steps=", warmup_steps)};
}

class CfgPipeFusionTest : public ::testing::TestWithParam<PipeFusionLayout> {};

// With every step a warm-up step the stages run the whole sequence one after
// the other: a single rank's computation, split by blocks (and, with
// sequence parallelism, each stage's image tokens over its sp ranks: the
// 15 tokens of SequenceRequest in shares of 8 that overlap by one). Requests
// of changing max_sequence_length reuse the group (each shape gets its
// buffers).
TEST_P(CfgPipeFusionTest, WarmupStepsOnlyGiveTheSingleRankLatents) {
  const PipeFusionLayout& layout = GetParam();
  const std::string model_dir = TinyCheckpoint(layout.model);
  ASSERT_FALSE(model_dir.empty());
  std::vector<v1::GenerateRequest> requests;
  for (const int max_sequence_length : {31, 120, 31}) {
    v1::GenerateRequest request = SequenceRequest();
    request.set_max_sequence_length(max_sequence_length);
    requests.push_back(request);
  }
  std::vector<std::vector<std::vector<float>>> references;
  int64_t single_rank_bytes = 0;
  {
    std::unique_ptr<ServingCluster> cluster = StartCluster(model_dir, 1, {});
    ASSERT_NE(cluster, nullptr);
    single_rank_bytes = TransformerBytes(*cluster, 0);
    for (const v1::GenerateRequest& request : requests) {
      absl::StatusOr<v1::GenerateResponse> single =
          cluster->Generate(request, kCallSeconds);
      ASSERT_TRUE(single.ok()) << single.status();
      references.emplace_back();
      for (const v1::Image& image : single->images()) {
        references.back().push_back(LatentFloats(image));
      }
    }
  }
  std::unique_ptr<ServingCluster> cluster = StartCluster(
      model_dir, layout.world(),
      PipeFusionFlags(layout, SequenceRequest().num_inference_steps()));
  ASSERT_NE(cluster, nullptr);
  for (size_t i = 0; i < requests.size(); ++i) {
    absl::StatusOr<v1::GenerateResponse> staged =
        cluster->Generate(requests[i], kCallSeconds);
    ASSERT_TRUE(staged.ok()) << staged.status();
    ExpectLatents(*staged, references[i],
                  absl::StrCat(layout.Name(), ", max_sequence_length ",
                               requests[i].max_sequence_length()));
  }
  // Each stage reads one of the two blocks plus the embedders and output
  // layers: less than a single rank, and more than all of it together.
  int64_t stage_bytes = 0;
  for (int rank = 0; rank < layout.world(); ++rank) {
    const int64_t bytes = TransformerBytes(*cluster, rank);
    std::cout << layout.Name() << ": rank " << rank << " loaded " << bytes
              << " of " << single_rank_bytes
              << " bytes of transformer weights\n";
    EXPECT_GT(bytes, 0) << "rank " << rank;
    EXPECT_LT(bytes, single_rank_bytes) << "rank " << rank;
    // The ranks of the first pp group (pp varies fastest after sp).
    if (rank % layout.sp() == 0 &&
        rank < PipeFusionLayout::kStages * layout.sp()) {
      stage_bytes += bytes;
    }
  }
  EXPECT_GT(stage_bytes, single_rank_bytes);
}

std::vector<PipeFusionLayout> PipeFusionLayouts() {
  std::vector<PipeFusionLayout> layouts;
  for (const config::ModelDefaults& model :
       {families::kPixArtSigmaDefaults, families::kSD3MediumDefaults}) {
    for (PipeFusionLayout layout :
         {PipeFusionLayout{}, PipeFusionLayout{.dp = 2},
          PipeFusionLayout{.cfg = 2}, PipeFusionLayout{.ulysses = 2},
          PipeFusionLayout{.ring = 2}, PipeFusionLayout{.cfg = 2, .ring = 2},
          PipeFusionLayout{.dp = 2, .ulysses = 2}}) {
      layout.model = model;
      layouts.push_back(layout);
    }
  }
  return layouts;
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, CfgPipeFusionTest, ::testing::ValuesIn(PipeFusionLayouts()),
    [](const ::testing::TestParamInfo<PipeFusionLayout>& info) {
      return info.param.Name();
    });

// After the warm-up step the patch pipeline attends to one-step-stale keys
// and values of the other patches by design, so the image is measured by
// its similarity to a single rank's, as PipeFusion is.
class CfgPatchPipelineTest : public ::testing::TestWithParam<PipeFusionLayout> {
};

TEST_P(CfgPatchPipelineTest, StaysCloseToASingleRank) {
  const PipeFusionLayout& layout = GetParam();
  const std::string model_dir = TinyCheckpoint(layout.model);
  ASSERT_FALSE(model_dir.empty());
  v1::GenerateRequest request = SequenceRequest();
  request.set_num_inference_steps(4);
  request.set_output_format(v1::OUTPUT_FORMAT_RGB8);
  absl::StatusOr<v1::GenerateResponse> single;
  {
    std::unique_ptr<ServingCluster> cluster = StartCluster(model_dir, 1, {});
    ASSERT_NE(cluster, nullptr);
    single = cluster->Generate(request, kCallSeconds);
    ASSERT_TRUE(single.ok()) << single.status();
  }
  std::unique_ptr<ServingCluster> cluster = StartCluster(
      model_dir, layout.world(), PipeFusionFlags(layout, /*warmup_steps=*/1));
  ASSERT_NE(cluster, nullptr);
  absl::StatusOr<v1::GenerateResponse> patched =
      cluster->Generate(request, kCallSeconds);
  ASSERT_TRUE(patched.ok()) << patched.status();
  const double psnr = RgbPsnr(*single, *patched);
  std::cout << layout.Name() << ", 1 warm-up step of 4: RGB PSNR " << psnr
            << " dB\n";
  RecordProperty("psnr_db", std::to_string(psnr));
  // Stale keys must change something (else the patches never ran) and must
  // not ruin the image.
  EXPECT_LT(psnr, INFINITY);
  EXPECT_GE(psnr, kMinPatchPipelinePsnrDb);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, CfgPatchPipelineTest,
    ::testing::Values(
        PipeFusionLayout{.model = families::kPixArtSigmaDefaults},
        PipeFusionLayout{.model = families::kSD3MediumDefaults},
        PipeFusionLayout{.model = families::kPixArtSigmaDefaults, .ulysses = 2},
        PipeFusionLayout{.model = families::kSD3MediumDefaults, .ring = 2}),
    [](const ::testing::TestParamInfo<PipeFusionLayout>& info) {
      return info.param.Name();
    });

}  // namespace
}  // namespace ditserve::testing
