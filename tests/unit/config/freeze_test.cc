#include "core/config/freeze.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/config/config_digest.h"
#include "core/config/field_error.h"
#include "core/config/model_defaults.h"
#include "core/config/parallel_config.h"
#include "core/engine/family_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/reference_specs.h"

namespace ditserve::config {

namespace {

using ::ditserve::testing::FullSizeSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::ParallelConfig Parallel(const ParallelFlags& flags, int world) {
  absl::StatusOr<v1::ParallelConfig> parallel =
      MakeParallelConfig(flags, world);
  EXPECT_TRUE(parallel.ok()) << parallel.status();
  return *parallel;
}

FreezeContext Context() {
  return {.sequence_number = 3,
          .generated_request_id = "gen-3",
          .drawn_seed = 1234,
          .deadline_unix_micros = 0};
}

v1::GenerateRequest OnePrompt() {
  v1::GenerateRequest request;
  request.add_prompt("a lighthouse at dusk");
  return request;
}

absl::StatusOr<v1::InputConfig> FreezeFor(
    const v1::GenerateRequest& request,
    const ModelDefaults& model = families::kFluxDevDefaults,
    const v1::ParallelConfig& parallel = Parallel({}, 1)) {
  return Freeze(request, FullSizeSpec(model), ServerOptions{}, parallel,
                Context());
}

// Asserts INVALID_ARGUMENT (or `code`) whose message contains `needle`.
void ExpectRejected(
    const v1::GenerateRequest& request, const std::string& needle,
    const ModelDefaults& model = families::kFluxDevDefaults,
    absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  absl::StatusOr<v1::InputConfig> config = FreezeFor(request, model);
  ASSERT_FALSE(config.ok()) << "accepted: " << config->ShortDebugString();
  EXPECT_EQ(config.status().code(), code) << config.status();
  EXPECT_THAT(std::string(config.status().message()), HasSubstr(needle));
  // Every refusal tells clients which fields to fix, and says so in words.
  const std::vector<std::string> fields = ErrorFields(config.status());
  EXPECT_FALSE(fields.empty()) << "no field attached to " << config.status();
  for (const std::string& field : fields) {
    EXPECT_THAT(std::string(config.status().message()), HasSubstr(field));
  }
}

void ExpectAccepted(const v1::GenerateRequest& request,
                    const ModelDefaults& model = families::kFluxDevDefaults) {
  absl::StatusOr<v1::InputConfig> config = FreezeFor(request, model);
  EXPECT_TRUE(config.ok()) << config.status();
}

class OmittedFieldsTest : public ::testing::TestWithParam<ModelDefaults> {};

TEST_P(OmittedFieldsTest, OmittedFieldsFreezeToTheModelsDefaults) {
  const ModelDefaults& defaults = GetParam();
  absl::StatusOr<v1::InputConfig> config = FreezeFor(OnePrompt(), defaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->model(), defaults.name);
  EXPECT_EQ(config->height(), defaults.height);
  EXPECT_EQ(config->width(), defaults.width);
  EXPECT_EQ(config->num_frames(), defaults.num_frames);
  EXPECT_EQ(config->fps(), defaults.fps);
  EXPECT_FALSE(config->use_dynamic_cfg());
  EXPECT_FALSE(config->vae_tiling());
  EXPECT_EQ(config->num_inference_steps(), defaults.num_inference_steps);
  EXPECT_FLOAT_EQ(config->guidance_scale(), defaults.guidance_scale);
  EXPECT_EQ(config->do_classifier_free_guidance(),
            defaults.uses_classifier_free_guidance);
  EXPECT_EQ(config->use_guidance_embedding(), defaults.uses_guidance_embedding);
  EXPECT_EQ(config->max_sequence_length(), defaults.max_sequence_length);
  EXPECT_EQ(config->scheduler(), defaults.scheduler);
  EXPECT_FLOAT_EQ(config->scheduler_shift(), defaults.scheduler_shift);
  EXPECT_EQ(config->scheduler_dynamic_shift(),
            defaults.scheduler_dynamic_shift);
  EXPECT_EQ(config->use_resolution_binning(), defaults.use_resolution_binning);
  EXPECT_EQ(config->output_format(), v1::OUTPUT_FORMAT_PNG);
  EXPECT_THAT(config->seeds(), ElementsAre(1234U));
  EXPECT_EQ(config->request_id(), "gen-3");
  EXPECT_EQ(config->sequence_number(), 3U);
  EXPECT_EQ(config->negative_prompt_size(),
            defaults.uses_classifier_free_guidance ? 1 : 0);
  EXPECT_EQ(config->parallel().world_size(), 1);
  EXPECT_GT(config->shapes().image_tokens(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    EveryServedModel, OmittedFieldsTest,
    ::testing::ValuesIn(engine::ServedModels()),
    [](const ::testing::TestParamInfo<ModelDefaults>& info) {
      std::string name(info.param.name);
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

TEST(FreezeTest, ExplicitFieldsOverrideDefaults) {
  v1::GenerateRequest request = OnePrompt();
  request.set_height(512);
  request.set_width(768);
  request.set_num_inference_steps(8);
  request.set_guidance_scale(2.0F);
  request.set_seed(99);
  request.set_max_sequence_length(256);
  request.set_output_format(v1::OUTPUT_FORMAT_LATENT_F32);
  request.set_request_id("client-7");
  request.set_priority(-4);
  absl::StatusOr<v1::InputConfig> config = FreezeFor(request);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->height(), 512);
  EXPECT_EQ(config->width(), 768);
  EXPECT_EQ(config->num_inference_steps(), 8);
  EXPECT_FLOAT_EQ(config->guidance_scale(), 2.0F);
  EXPECT_THAT(config->seeds(), ElementsAre(99U));
  EXPECT_EQ(config->max_sequence_length(), 256);
  EXPECT_EQ(config->output_format(), v1::OUTPUT_FORMAT_LATENT_F32);
  EXPECT_EQ(config->request_id(), "client-7");
  EXPECT_EQ(config->priority(), -4);
}

TEST(FreezeTest, ZeroIsAValueNotAnOmission) {
  v1::GenerateRequest request = OnePrompt();
  request.set_seed(0);
  request.set_guidance_scale(0.0F);
  absl::StatusOr<v1::InputConfig> config = FreezeFor(request);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->seeds(), ElementsAre(0U));
  EXPECT_FLOAT_EQ(config->guidance_scale(), 0.0F);
}

TEST(FreezeTest, EachImageGetsConsecutiveSeeds) {
  v1::GenerateRequest request = OnePrompt();
  request.add_prompt("b");
  request.add_prompt("c");
  request.set_seed(41);
  absl::StatusOr<v1::InputConfig> config = FreezeFor(request);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->seeds(), ElementsAre(41U, 42U, 43U));
}

TEST(FreezeTest, FreezingIsDeterministic) {
  v1::GenerateRequest request = OnePrompt();
  request.set_seed(5);
  absl::StatusOr<v1::InputConfig> a = FreezeFor(request);
  absl::StatusOr<v1::InputConfig> b = FreezeFor(request);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(SerializeDeterministic(*a), SerializeDeterministic(*b));
  EXPECT_EQ(MessageDigest(*a), MessageDigest(*b));
}

TEST(FreezeTest, AnyFieldChangeChangesTheDigest) {
  v1::GenerateRequest base = OnePrompt();
  const uint64_t base_digest = MessageDigest(*FreezeFor(base));
  std::vector<v1::GenerateRequest> variants(10, base);
  variants[0].set_prompt(0, "a lighthouse at dawn");
  variants[1].set_height(512);
  variants[2].set_width(512);
  variants[3].set_num_inference_steps(27);
  variants[4].set_guidance_scale(3.0F);
  variants[5].set_seed(1235);
  variants[6].set_max_sequence_length(511);
  variants[7].set_output_format(v1::OUTPUT_FORMAT_RGB8);
  variants[8].set_output_format(v1::OUTPUT_FORMAT_JPEG);
  variants[9].set_output_format(v1::OUTPUT_FORMAT_WEBP);
  for (size_t i = 0; i < variants.size(); ++i) {
    absl::StatusOr<v1::InputConfig> config = FreezeFor(variants[i]);
    ASSERT_TRUE(config.ok()) << i << ": " << config.status();
    EXPECT_NE(MessageDigest(*config), base_digest) << "variant " << i;
  }
}

TEST(FreezeTest, FluxAt1024HasTheDocumentedShapes) {
  absl::StatusOr<v1::InputConfig> config = FreezeFor(OnePrompt());
  ASSERT_TRUE(config.ok()) << config.status();
  const v1::DerivedShapes& shapes = config->shapes();
  EXPECT_EQ(shapes.latent_height(), 128);
  EXPECT_EQ(shapes.latent_width(), 128);
  EXPECT_EQ(shapes.latent_channels(), 16);
  EXPECT_EQ(shapes.image_tokens(), 4096);
  EXPECT_EQ(shapes.text_tokens(), 512);
  EXPECT_EQ(shapes.sequence_tokens(), 4608);
  EXPECT_EQ(shapes.padded_sequence_tokens(), 4608);
  EXPECT_EQ(shapes.shard_tokens(), 4608);
  EXPECT_THAT(shapes.pipefusion_patch_token_offsets(), ElementsAre(0, 4096));
  EXPECT_THAT(shapes.dp_group_prompt_offsets(), ElementsAre(0, 1));
  EXPECT_EQ(shapes.guidance_branches(), 1);
}

TEST(FreezeTest, SequenceParallelFourSplits4608Into1152PerRank) {
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(OnePrompt(), families::kFluxDevDefaults,
                Parallel({.ring_degree = 2, .ulysses_degree = 2}, 4));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->shapes().padded_sequence_tokens(), 4608);
  EXPECT_EQ(config->shapes().sequence_padding_tokens(), 0);
  EXPECT_EQ(config->shapes().shard_tokens(), 1152);
}

TEST(FreezeTest, OddJointLengthIsPaddedAndSaysSo) {
  v1::GenerateRequest request = OnePrompt();
  request.set_height(1024);
  request.set_width(1600);  // 64 × 100 patches = 6400 image tokens
  request.set_max_sequence_length(173);
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(request, families::kFluxDevDefaults,
                Parallel({.ring_degree = 2, .ulysses_degree = 2}, 4));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->shapes().sequence_tokens(), 6573);
  EXPECT_EQ(config->shapes().padded_sequence_tokens(), 6576);
  EXPECT_EQ(config->shapes().sequence_padding_tokens(), 3);
  EXPECT_EQ(config->shapes().shard_tokens(), 1644);
}

TEST(FreezeTest, Sd3SequenceHoldsClipAndT5Tokens) {
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(OnePrompt(), families::kSD3MediumDefaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->shapes().text_tokens(), 77 + 256);
  EXPECT_EQ(config->shapes().sequence_tokens(), 4096 + 333);
}

TEST(FreezeTest, PixArtSequenceIsImageTokensOnly) {
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(OnePrompt(), families::kPixArtAlphaDefaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->shapes().text_tokens(), 120);
  EXPECT_EQ(config->shapes().sequence_tokens(), 4096);
  EXPECT_EQ(config->shapes().latent_channels(), 4);
  EXPECT_EQ(config->shapes().guidance_branches(), 2);
}

TEST(FreezeTest, PixArtResolutionBinningGeneratesAtTheNearestTrainedSize) {
  v1::GenerateRequest request = OnePrompt();
  request.set_height(768);
  request.set_width(1360);
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(request, families::kPixArtSigmaDefaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->width(), 1360);
  EXPECT_EQ(config->shapes().generated_height(), 768);
  EXPECT_EQ(config->shapes().generated_width(), 1344);
  EXPECT_EQ(config->shapes().latent_width(), 1344 / 8);
  EXPECT_EQ(config->shapes().image_tokens(), (768 / 16) * (1344 / 16));
}

// Binning generates a size of its table and resizes the image to the one
// asked for, so that may be any size, as in diffusers; without binning the
// size must fit the latent grid.
TEST(FreezeTest, ResolutionBinningTakesSizesOffTheLatentGrid) {
  v1::GenerateRequest request = OnePrompt();
  request.set_height(1000);
  request.set_width(601);
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(request, families::kPixArtAlphaDefaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->height(), 1000);
  EXPECT_EQ(config->width(), 601);
  EXPECT_EQ(config->shapes().generated_height() % 16, 0);
  EXPECT_EQ(config->shapes().generated_width() % 16, 0);
  request.set_use_resolution_binning(false);
  ExpectRejected(request, "height 1000 is not a multiple of 16",
                 families::kPixArtAlphaDefaults);
}

TEST(FreezeTest, WithoutResolutionBinningPixArtGeneratesTheRequestedSize) {
  v1::GenerateRequest request = OnePrompt();
  request.set_height(768);
  request.set_width(1360);
  request.set_use_resolution_binning(false);
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(request, families::kPixArtSigmaDefaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->shapes().generated_width(), 1360);
  EXPECT_EQ(config->shapes().latent_width(), 1360 / 8);
}

TEST(FreezeTest, DataParallelSplitsPromptsDeterministically) {
  v1::GenerateRequest request = OnePrompt();
  request.add_prompt("b");
  request.add_prompt("c");
  absl::StatusOr<v1::InputConfig> config = FreezeFor(
      request, families::kFluxDevDefaults, Parallel({.dp_degree = 2}, 2));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->shapes().dp_group_prompt_offsets(), ElementsAre(0, 2, 3));
  EXPECT_EQ(config->shapes().max_batch_per_dp_group(), 2);
}

TEST(FreezeTest, PipefusionPatchesAreWholeRows) {
  v1::GenerateRequest request = OnePrompt();
  request.set_height(96);  // 6 patch rows
  request.set_width(64);   // 4 patch columns
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(request, families::kFluxDevDefaults,
                Parallel({.pipefusion_degree = 4}, 4));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->shapes().pipefusion_patch_token_offsets(),
              ElementsAre(0, 8, 16, 20, 24));
}

TEST(FreezeTest, TooFewPatchRowsForPipefusionIsRejected) {
  v1::GenerateRequest request = OnePrompt();
  request.set_height(48);  // 3 patch rows
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(request, families::kFluxDevDefaults,
                Parallel({.pipefusion_degree = 4}, 4));
  ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("height 48 gives 3 patch rows, fewer than the "
                        "server's num_pipeline_patch 4"));
}

// Binning picks the generated height by aspect ratio, so the refusal names
// that height and the fields that change it, rather than advising a taller
// request that may bin to the same height.
TEST(FreezeTest, TooFewPatchRowsAfterBinningNameTheGeneratedHeight) {
  v1::GenerateRequest request = OnePrompt();
  request.set_height(256);
  request.set_width(1024);
  absl::StatusOr<v1::InputConfig> config = FreezeFor(
      request, families::kPixArtSigmaDefaults,
      Parallel({.pipefusion_degree = 2, .num_pipeline_patch = 40}, 2));
  ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("height 256 at width 1024 is generated at height 512 "
                        "(use_resolution_binning), which gives 32 patch rows, "
                        "fewer than the server's num_pipeline_patch 40"));
  EXPECT_THAT(
      ErrorFields(config.status()),
      ::testing::ElementsAre("height", "width", "use_resolution_binning"));
}

TEST(FreezeTest, CfgParallelNeedsGuidanceAboveOne) {
  v1::GenerateRequest request = OnePrompt();
  request.set_guidance_scale(1.0F);
  const v1::ParallelConfig cfg2 = Parallel({.cfg_degree = 2}, 2);
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(request, families::kSD3MediumDefaults, cfg2);
  ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(), HasSubstr("guidance_scale 1"));
  request.set_guidance_scale(1.5F);
  config = FreezeFor(request, families::kSD3MediumDefaults, cfg2);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->shapes().branches_per_cfg_rank(), 1);
}

TEST(FreezeValidationTest, Model) {
  v1::GenerateRequest request = OnePrompt();
  request.set_model("flux-dev");
  ExpectAccepted(request);
  request.set_model("sd3-medium");
  ExpectRejected(request, "model \"sd3-medium\" is not served here",
                 families::kFluxDevDefaults, absl::StatusCode::kNotFound);
  // Quoted short: gRPC repeats the message in its trailers, which clients
  // cap at a few KiB.
  request.set_model(std::string(100000, 'm'));
  ExpectRejected(request,
                 absl::StrCat("model \"", std::string(64, 'm'),
                              "...\" is not served here"),
                 families::kFluxDevDefaults, absl::StatusCode::kNotFound);
}

TEST(FreezeValidationTest, RefusalsCarryTheFieldsToFix) {
  const auto fields_of = [](const v1::GenerateRequest& request,
                            const ModelDefaults& model) {
    return ErrorFields(FreezeFor(request, model).status());
  };
  const ModelDefaults& flux = families::kFluxDevDefaults;
  v1::GenerateRequest request = OnePrompt();
  request.set_height(130);
  EXPECT_THAT(fields_of(request, flux), ElementsAre("height"));
  request.set_height(2048);
  request.set_width(2048);
  ServerOptions small_budget;
  small_budget.max_pixels = 1024 * 1024;
  EXPECT_THAT(ErrorFields(Freeze(request, FullSizeSpec(flux), small_budget,
                                 Parallel({}, 1), Context())
                              .status()),
              ElementsAre("height", "width"));
  request = OnePrompt();
  request.set_model("sd3-medium");
  EXPECT_THAT(fields_of(request, flux), ElementsAre("model"));
  request = OnePrompt();
  request.set_prompt(0, "bad \xC3");
  EXPECT_THAT(fields_of(request, flux), ElementsAre("prompt"));
  request = OnePrompt();
  request.set_guidance_scale(1.0F);
  EXPECT_THAT(ErrorFields(FreezeFor(request, families::kSD3MediumDefaults,
                                    Parallel({.cfg_degree = 2}, 2))
                              .status()),
              ElementsAre("guidance_scale"));
  EXPECT_TRUE(fields_of(OnePrompt(), flux).empty());
}

TEST(FreezeValidationTest, PromptCount) {
  v1::GenerateRequest request;
  ExpectRejected(request, "prompt has 0 entries; allowed 1 to 4");
  for (int i = 0; i < 4; ++i) request.add_prompt("p");
  ExpectAccepted(request);
  request.add_prompt("p");
  ExpectRejected(request, "prompt has 5 entries; allowed 1 to 4");
}

TEST(FreezeValidationTest, PromptUtf8) {
  v1::GenerateRequest request;
  request.add_prompt("na\xC3\xAFve caf\xC3\xA9");
  ExpectAccepted(request);
  request.set_prompt(0, "bad \xC3");
  ExpectRejected(request, "prompt[0] is not valid UTF-8 (first bad byte at 4)");
}

TEST(FreezeValidationTest, PromptLength) {
  v1::GenerateRequest request;
  request.add_prompt(std::string(4096, 'a'));
  ExpectAccepted(request);
  request.set_prompt(0, std::string(4097, 'a'));
  ExpectRejected(request, "prompt[0] has 4097 bytes; the limit is 4096");
}

TEST(FreezeValidationTest, NegativePromptCount) {
  v1::GenerateRequest request = OnePrompt();
  request.add_prompt("second");
  request.add_prompt("third");
  request.add_negative_prompt("blurry");
  request.add_negative_prompt("");
  ExpectRejected(request,
                 "negative_prompt has 2 entries; give none, one for every "
                 "prompt, or one per prompt (3)",
                 families::kSD3MediumDefaults);
  request.add_negative_prompt("dark");
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(request, families::kSD3MediumDefaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->negative_prompt(), ElementsAre("blurry", "", "dark"));
}

// As diffusers takes one negative_prompt string for a batch of prompts.
TEST(FreezeValidationTest, OneNegativePromptAppliesToEveryPrompt) {
  v1::GenerateRequest request = OnePrompt();
  request.add_prompt("second");
  request.add_negative_prompt("blurry, low quality");
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(request, families::kSD3MediumDefaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->negative_prompt(),
              ElementsAre("blurry, low quality", "blurry, low quality"));
}

TEST(FreezeValidationTest, NegativePromptNeedsCfgFamily) {
  v1::GenerateRequest request = OnePrompt();
  request.add_negative_prompt("blurry");
  ExpectRejected(request, "negative_prompt is not used by flux-dev");
}

TEST(FreezeValidationTest, NegativePromptUtf8) {
  v1::GenerateRequest request = OnePrompt();
  request.add_negative_prompt("\xFF");
  ExpectRejected(request, "negative_prompt[0] is not valid UTF-8",
                 families::kPixArtSigmaDefaults);
}

TEST(FreezeValidationTest, SizeMultiple) {
  v1::GenerateRequest request = OnePrompt();
  request.set_height(144);
  ExpectAccepted(request);
  request.set_height(130);
  ExpectRejected(request,
                 "height 130 is not a multiple of 16 (VAE scale 8 × patch 2)");
  request.set_height(144);
  request.set_width(100);
  ExpectRejected(request, "width 100 is not a multiple of 16");
}

TEST(FreezeValidationTest, SizeBounds) {
  v1::GenerateRequest request = OnePrompt();
  request.set_width(2048);
  ExpectAccepted(request);
  request.set_width(2064);
  ExpectRejected(request, "width 2064 is out of range; allowed 16 to 2048");
  request.set_width(0);
  ExpectRejected(request, "width 0 is out of range");
  request.set_width(-16);
  ExpectRejected(request, "width -16 is out of range");
}

TEST(FreezeValidationTest, PixelBudget) {
  v1::GenerateRequest request = OnePrompt();
  request.set_height(2048);
  request.set_width(2048);
  ExpectAccepted(request);
  ServerOptions options;
  options.max_pixels = 1024 * 1024;
  absl::StatusOr<v1::InputConfig> config =
      Freeze(request, FullSizeSpec(families::kFluxDevDefaults), options,
             Parallel({}, 1), Context());
  ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(),
              HasSubstr("height × width 2048 × 2048 = 4194304 pixels exceeds "
                        "the limit of 1048576"));
}

TEST(FreezeValidationTest, Steps) {
  v1::GenerateRequest request = OnePrompt();
  request.set_num_inference_steps(1);
  ExpectAccepted(request);
  request.set_num_inference_steps(0);
  ExpectRejected(request,
                 "num_inference_steps 0 is out of range; allowed 1 to 200");
  request.set_num_inference_steps(201);
  ExpectRejected(request, "num_inference_steps 201 is out of range");
}

TEST(FreezeValidationTest, GuidanceIsFiniteAndBounded) {
  v1::GenerateRequest request = OnePrompt();
  request.set_guidance_scale(100.0F);
  ExpectAccepted(request);
  request.set_guidance_scale(std::nanf(""));
  ExpectRejected(request, "guidance_scale nan is not allowed");
  request.set_guidance_scale(std::numeric_limits<float>::infinity());
  ExpectRejected(request, "guidance_scale inf is not allowed");
  request.set_guidance_scale(-1.0F);
  ExpectRejected(request,
                 "guidance_scale -1 is not allowed; use a finite "
                 "value from 0 to 100");
}

TEST(FreezeValidationTest, SeedLeavesRoomForEveryImage) {
  v1::GenerateRequest request = OnePrompt();
  request.add_prompt("second");
  request.set_seed(std::numeric_limits<uint64_t>::max() - 1);
  ExpectAccepted(request);
  request.set_seed(std::numeric_limits<uint64_t>::max());
  ExpectRejected(request, "seed 18446744073709551615 leaves no room for 2");
}

TEST(FreezeValidationTest, MaxSequenceLength) {
  v1::GenerateRequest request = OnePrompt();
  request.set_max_sequence_length(512);
  ExpectAccepted(request);
  request.set_max_sequence_length(513);
  ExpectRejected(request,
                 "max_sequence_length 513 is out of range; allowed 1 "
                 "to 512 for flux-dev");
  request.set_max_sequence_length(0);
  ExpectRejected(request, "max_sequence_length 0 is out of range");
}

TEST(FreezeValidationTest, ResolutionBinningOnlyForPixArt) {
  v1::GenerateRequest request = OnePrompt();
  request.set_use_resolution_binning(true);
  ExpectAccepted(request, families::kPixArtAlphaDefaults);
  ExpectRejected(request,
                 "use_resolution_binning is not available for flux-dev");
  request.set_use_resolution_binning(false);
  ExpectAccepted(request);
}

TEST(FreezeValidationTest, ResolutionBinningNeedsATableForTheSampleSize) {
  ModelSpec spec = FullSizeSpec(families::kPixArtSigmaDefaults);
  spec.sample_size = 8;
  absl::StatusOr<v1::InputConfig> config =
      Freeze(OnePrompt(), spec, ServerOptions{}, Parallel({}, 1), Context());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("use_resolution_binning true: resolution binning has "
                        "no aspect-ratio table for transformer sample_size 8"));
}

// PixArt-Sigma 2K's table bins 256 × 1024 (aspect 0.25) to 1024 × 4096.
TEST(FreezeValidationTest, ABinnedSizeOverTheLimitsIsRefused) {
  ModelSpec spec = FullSizeSpec(families::kPixArtSigmaDefaults);
  spec.sample_size = 256;
  v1::GenerateRequest request = OnePrompt();
  request.set_height(256);
  request.set_width(1024);
  absl::StatusOr<v1::InputConfig> config =
      Freeze(request, spec, ServerOptions{}, Parallel({}, 1), Context());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("use_resolution_binning generates 1024 × 4096 for "
                        "256 × 1024, over the limits of 2048 pixels a side"));
  request.set_use_resolution_binning(false);
  EXPECT_TRUE(
      Freeze(request, spec, ServerOptions{}, Parallel({}, 1), Context()).ok());
}

TEST(FreezeValidationTest, OutputFormat) {
  v1::GenerateRequest request = OnePrompt();
  request.set_output_format(v1::OUTPUT_FORMAT_RGB8);
  ExpectAccepted(request);
  request.set_output_format(static_cast<v1::OutputFormat>(9));
  ExpectRejected(request, "output_format 9 is unknown");
}

TEST(FreezeValidationTest, LossyFormatsTakeAQualityThatDefaultsTo90) {
  v1::GenerateRequest request = OnePrompt();
  for (const v1::OutputFormat format :
       {v1::OUTPUT_FORMAT_JPEG, v1::OUTPUT_FORMAT_WEBP}) {
    request.set_output_format(format);
    request.clear_output_quality();
    absl::StatusOr<v1::InputConfig> config = FreezeFor(request);
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(config->output_format(), format);
    EXPECT_EQ(config->output_quality(), 90);
    for (const int quality : {1, 100}) {
      request.set_output_quality(quality);
      config = FreezeFor(request);
      ASSERT_TRUE(config.ok()) << config.status();
      EXPECT_EQ(config->output_quality(), quality);
    }
    request.set_output_quality(0);
    ExpectRejected(request,
                   "output_quality 0 is out of range; allowed 1 to 100");
    request.set_output_quality(101);
    ExpectRejected(request, "output_quality 101 is out of range");
  }
  request.set_output_format(v1::OUTPUT_FORMAT_PNG);
  request.clear_output_quality();
  absl::StatusOr<v1::InputConfig> png = FreezeFor(request);
  ASSERT_TRUE(png.ok()) << png.status();
  EXPECT_EQ(png->output_quality(), 0);
  request.set_output_quality(90);
  ExpectRejected(request,
                 "output_quality is for OUTPUT_FORMAT_JPEG and "
                 "OUTPUT_FORMAT_WEBP; output_format is OUTPUT_FORMAT_PNG");
  request.clear_output_format();
  ExpectRejected(request, "output_format is OUTPUT_FORMAT_PNG");
  request.set_output_format(v1::OUTPUT_FORMAT_MP4);
  ExpectRejected(request, "output_format is OUTPUT_FORMAT_MP4",
                 families::kCogVideoX5bDefaults);
}

TEST(FreezeValidationTest, PartialImagesAreSpreadEvenlyBeforeTheLastStep) {
  v1::GenerateRequest request = OnePrompt();
  request.set_num_inference_steps(28);
  absl::StatusOr<v1::InputConfig> config = FreezeFor(request);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->partial_image_steps(), ElementsAre());
  const std::vector<std::vector<int>> expected = {{14}, {9, 18}, {7, 14, 21}};
  for (int partial = 1; partial <= 3; ++partial) {
    request.set_partial_images(partial);
    config = FreezeFor(request);
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(std::vector<int>(config->partial_image_steps().begin(),
                               config->partial_image_steps().end()),
              expected[partial - 1])
        << partial;
  }
  // As many previews as steps before the last: one after each.
  request.set_num_inference_steps(4);
  config = FreezeFor(request);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->partial_image_steps(), ElementsAre(1, 2, 3));
  // A video's previews are videos, after its steps the same way.
  request.set_num_inference_steps(50);
  config = FreezeFor(request, families::kCogVideoX5bDefaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->partial_image_steps(), ElementsAre(12, 25, 37));
}

TEST(FreezeValidationTest, PartialImagesAreBoundedByTheSteps) {
  v1::GenerateRequest request = OnePrompt();
  request.set_partial_images(4);
  ExpectRejected(request, "partial_images 4 is out of range; allowed 0 to 3");
  request.set_partial_images(-1);
  ExpectRejected(request, "partial_images -1 is out of range");
  request.set_partial_images(2);
  request.set_num_inference_steps(2);
  ExpectRejected(request,
                 "partial_images 2 is out of range; allowed 0 to 1 (fewer "
                 "than num_inference_steps 2)");
  request.set_num_inference_steps(1);
  request.set_partial_images(1);
  ExpectRejected(request, "allowed 0 to 0");
}

TEST(FreezeValidationTest, WebpIsRefusedBeyondItsLargestSide) {
  ServerOptions options;
  options.max_side_pixels = 32768;
  options.max_pixels = int64_t{32768} * 32768;
  options.max_request_bytes = 0;
  v1::GenerateRequest request = OnePrompt();
  request.set_output_format(v1::OUTPUT_FORMAT_WEBP);
  request.set_height(64);
  request.set_width(16368);
  const ModelSpec spec = FullSizeSpec(families::kFluxDevDefaults);
  EXPECT_TRUE(Freeze(request, spec, options, Parallel({}, 1), Context()).ok());
  request.set_width(16384);
  absl::StatusOr<v1::InputConfig> config =
      Freeze(request, spec, options, Parallel({}, 1), Context());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("OUTPUT_FORMAT_WEBP holds at most 16383 pixels a side; "
                        "height × width is 64 × 16384"));
  request.set_output_format(v1::OUTPUT_FORMAT_JPEG);
  EXPECT_TRUE(Freeze(request, spec, options, Parallel({}, 1), Context()).ok());
}

TEST(FreezeValidationTest, RequestId) {
  v1::GenerateRequest request = OnePrompt();
  request.set_request_id(std::string(128, 'r'));
  ExpectAccepted(request);
  request.set_request_id(std::string(129, 'r'));
  ExpectRejected(request, "request_id has 129 characters; the limit is 128");
  request.set_request_id("two words");
  ExpectRejected(request, "request_id may only hold printable ASCII");
}

TEST(FreezeValidationTest, Mp4IsForVideoModels) {
  v1::GenerateRequest request = OnePrompt();
  request.set_output_format(v1::OUTPUT_FORMAT_MP4);
  ExpectRejected(request,
                 "OUTPUT_FORMAT_MP4 is for video models; flux-dev makes "
                 "images");
  ExpectAccepted(request, families::kCogVideoX5bDefaults);
}

TEST(FreezeValidationTest, AnimatedWebpIsRefusedAboveWhatBrowsersPlay) {
  v1::GenerateRequest request = OnePrompt();
  request.set_output_format(v1::OUTPUT_FORMAT_WEBP);
  request.set_num_frames(9);
  request.set_fps(90);
  ExpectAccepted(request, families::kCogVideoX5bDefaults);
  request.set_fps(91);
  ExpectRejected(request,
                 "fps 91 is too fast for an animated WebP (output_format "
                 "OUTPUT_FORMAT_WEBP), which browsers play at most at 90 fps",
                 families::kCogVideoX5bDefaults);
  request.set_output_format(v1::OUTPUT_FORMAT_MP4);
  ExpectAccepted(request, families::kCogVideoX5bDefaults);
}

TEST(FreezeValidationTest, DynamicCfgOnlyWhereThePipelineHasIt) {
  v1::GenerateRequest request = OnePrompt();
  request.set_use_dynamic_cfg(true);
  ExpectRejected(request, "use_dynamic_cfg is not available for flux-dev");
  ExpectRejected(request, "use_dynamic_cfg is not available for sd3-medium",
                 families::kSD3MediumDefaults);
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(request, families::kCogVideoX5bDefaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->use_dynamic_cfg());
}

TEST(FreezeValidationTest, VaeTilingIsFrozenWhereTheVaeHasTiles) {
  v1::GenerateRequest request = OnePrompt();
  request.set_vae_tiling(true);
  absl::StatusOr<v1::InputConfig> config = FreezeFor(request);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->vae_tiling());
  ModelSpec untileable = FullSizeSpec(families::kFluxDevDefaults);
  untileable.vae_tile_height = 0;
  untileable.vae_tile_width = 0;
  untileable.vae_tiling_refusal = "tiles of 16x16 pixels step 1x1";
  absl::StatusOr<v1::InputConfig> refused =
      Freeze(request, untileable, ServerOptions{}, Parallel({}, 1), Context());
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "vae_tiling is not available for flux-dev: tiles of 16x16 pixels "
            "step 1x1; leave it unset or false");
}

TEST(FreezeValidationTest, CogVideoX2bTextLengthIsFixed) {
  v1::GenerateRequest request = OnePrompt();
  request.set_max_sequence_length(100);
  ExpectRejected(request,
                 "max_sequence_length 100 is not allowed for cogvideox-2b; it "
                 "is fixed at 226",
                 families::kCogVideoX2bDefaults);
  ExpectAccepted(request, families::kCogVideoX5bDefaults);
  request.set_max_sequence_length(226);
  ExpectAccepted(request, families::kCogVideoX2bDefaults);
}

TEST(FreezeValidationTest, ImageModelsTakeOneFrameAndNoFps) {
  v1::GenerateRequest request = OnePrompt();
  request.set_num_frames(1);
  ExpectAccepted(request);
  request.set_num_frames(9);
  ExpectRejected(request,
                 "num_frames 9 is not allowed: flux-dev makes images; use 1");
  request.clear_num_frames();
  request.set_fps(8);
  ExpectRejected(request, "fps is not used by flux-dev (an image model)");
}

// A video model shaped like CogVideoX: 4x temporal compression, frames
// 8N + 1, 8 fps; with `temporal_patch` 2 like CogVideoX 1.5.
ModelSpec VideoSpec(int temporal_patch = 1) {
  ModelSpec spec = FullSizeSpec(families::kSD3MediumDefaults);
  spec.defaults.name = "test-video";
  spec.defaults.height = 480;
  spec.defaults.width = 720;
  spec.defaults.num_frames = 49;
  spec.defaults.frame_step = 8;
  spec.defaults.fps = 8;
  spec.temporal_compression = 4;
  spec.temporal_patch = temporal_patch;
  return spec;
}

absl::StatusOr<v1::InputConfig> FreezeVideo(const v1::GenerateRequest& request,
                                            const ModelSpec& spec,
                                            const ServerOptions& options = {}) {
  return Freeze(request, spec, options, Parallel({}, 1), Context());
}

TEST(FreezeVideoTest, DefaultsGiveLatentFramesAndVideoTokens) {
  absl::StatusOr<v1::InputConfig> config =
      FreezeVideo(OnePrompt(), VideoSpec());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->num_frames(), 49);
  EXPECT_EQ(config->fps(), 8);
  EXPECT_EQ(config->shapes().latent_frames(), 13);
  // 13 frames of 30 x 45 patches (480 x 720 pixels, VAE 8, patch 2).
  EXPECT_EQ(config->shapes().image_tokens(), 13 * 30 * 45);
}

TEST(FreezeVideoTest, ImageLatentShapeHasTheFramesFirstForVideo) {
  absl::StatusOr<v1::InputConfig> video =
      FreezeVideo(OnePrompt(), VideoSpec(2));
  ASSERT_TRUE(video.ok()) << video.status();
  // 49 frames: 13 latent frames padded to 14, 16 channels, 60 x 90.
  EXPECT_THAT(video->shapes().image_latent_shape(),
              ElementsAre(14, 16, 60, 90));
  absl::StatusOr<v1::InputConfig> image =
      FreezeFor(OnePrompt(), families::kFluxDevDefaults);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_THAT(image->shapes().image_latent_shape(), ElementsAre(16, 128, 128));
}

TEST(FreezeVideoTest, CogVideoX15DefaultsPadTwentyOneLatentFramesToTwentyTwo) {
  absl::StatusOr<v1::InputConfig> config =
      FreezeFor(OnePrompt(), families::kCogVideoX15Defaults);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->num_frames(), 81);
  EXPECT_EQ(config->fps(), 16);
  EXPECT_EQ(config->shapes().latent_frames(), 22);
  // 11 token frames of 48 x 85 patches (768 x 1360 pixels).
  EXPECT_EQ(config->shapes().image_tokens(), 11 * 48 * 85);
  EXPECT_EQ(config->shapes().sequence_tokens(), 11 * 48 * 85 + 226);
}

TEST(FreezeVideoTest, TemporalPatchesPadTheLatentFramesInFront) {
  v1::GenerateRequest request = OnePrompt();
  request.set_num_frames(81);
  absl::StatusOr<v1::InputConfig> config = FreezeVideo(request, VideoSpec(2));
  ASSERT_TRUE(config.ok()) << config.status();
  // (81 - 1) / 4 + 1 = 21 latent frames, padded to 22: 11 token frames.
  EXPECT_EQ(config->shapes().latent_frames(), 22);
  EXPECT_EQ(config->shapes().image_tokens(), 11 * 30 * 45);
}

TEST(FreezeVideoTest, FrameCountsFollowTheModelsRule) {
  v1::GenerateRequest request = OnePrompt();
  for (int frames : {1, 9, 17, 161}) {
    request.set_num_frames(frames);
    request.set_height(64);
    request.set_width(64);
    EXPECT_TRUE(FreezeVideo(request, VideoSpec()).ok()) << frames;
  }
  for (int frames : {0, 2, 48, 50, 169}) {
    request.set_num_frames(frames);
    absl::StatusOr<v1::InputConfig> config = FreezeVideo(request, VideoSpec());
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument)
        << frames;
    EXPECT_THAT(std::string(config.status().message()),
                HasSubstr("allowed 8 × N + 1 frames (1, 9, 17, ...) up to 161"))
        << frames;
  }
}

TEST(FreezeVideoTest, PixelFramesAndFpsAreBounded) {
  v1::GenerateRequest request = OnePrompt();
  ServerOptions options;
  options.max_video_pixels = int64_t{480} * 720 * 49;
  EXPECT_TRUE(FreezeVideo(request, VideoSpec(), options).ok());
  request.set_num_frames(57);
  absl::StatusOr<v1::InputConfig> config =
      FreezeVideo(request, VideoSpec(), options);
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("height × width × num_frames 480 × 720 × 57 = "
                        "19699200 exceeds the limit of 16934400"));
  request.clear_num_frames();
  for (int fps : {0, -1, 121}) {
    request.set_fps(fps);
    config = FreezeVideo(request, VideoSpec());
    EXPECT_THAT(std::string(config.status().message()),
                HasSubstr("is out of range; allowed 1 to 120"))
        << fps;
  }
  request.set_fps(120);
  EXPECT_TRUE(FreezeVideo(request, VideoSpec()).ok());
}

}  // namespace
}  // namespace ditserve::config
