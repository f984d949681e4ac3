#include <set>
#include <string>

#include "absl/status/status.h"
#include "core/config/model_defaults.h"
#include "core/engine/family_registry.h"
#include "core/families/cogvideox/cogvideox_defaults.h"
#include "core/families/flux/flux_defaults.h"
#include "core/families/pixart/pixart_defaults.h"
#include "core/families/sd3/sd3_defaults.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::engine {
namespace {

using ::testing::HasSubstr;

TEST(ServedModelsTest, EveryRowHasAUniqueNameThatLooksItselfUp) {
  std::set<std::string> names;
  for (const config::ModelDefaults& row : ServedModels()) {
    EXPECT_TRUE(names.insert(std::string(row.name)).second) << row.name;
    absl::StatusOr<config::ModelDefaults> found = DefaultsFor(row.name);
    ASSERT_TRUE(found.ok()) << found.status();
    EXPECT_EQ(found->name, row.name);
    EXPECT_EQ(found->num_inference_steps, row.num_inference_steps);
    EXPECT_GT(row.height, 0) << row.name;
    EXPECT_GT(row.max_sequence_length, 0) << row.name;
    EXPECT_LE(row.max_sequence_length, row.max_sequence_length_limit)
        << row.name;
    EXPECT_NE(row.scheduler, v1::SCHEDULER_KIND_UNSPECIFIED) << row.name;
  }
  EXPECT_EQ(names.size(), 8U);
}

TEST(ServedModelsTest, RowsHoldTheDocumentedDefaults) {
  const config::ModelDefaults& dev = families::kFluxDevDefaults;
  EXPECT_EQ(dev.height, 1024);
  EXPECT_EQ(dev.num_inference_steps, 28);
  EXPECT_FLOAT_EQ(dev.guidance_scale, 3.5F);
  EXPECT_TRUE(dev.uses_guidance_embedding);
  EXPECT_EQ(dev.max_sequence_length, 512);
  EXPECT_TRUE(dev.scheduler_dynamic_shift);
  const config::ModelDefaults& schnell = families::kFluxSchnellDefaults;
  EXPECT_EQ(schnell.num_inference_steps, 4);
  EXPECT_FLOAT_EQ(schnell.guidance_scale, 0.0F);
  EXPECT_EQ(schnell.max_sequence_length, 256);
  EXPECT_FALSE(schnell.uses_guidance_embedding);
  const config::ModelDefaults& alpha = families::kPixArtAlphaDefaults;
  EXPECT_EQ(alpha.num_inference_steps, 20);
  EXPECT_FLOAT_EQ(alpha.guidance_scale, 4.5F);
  EXPECT_EQ(alpha.max_sequence_length, 120);
  EXPECT_EQ(alpha.scheduler, v1::SCHEDULER_KIND_DPM_SOLVER_MULTISTEP);
  EXPECT_TRUE(alpha.use_resolution_binning);
  EXPECT_EQ(families::kPixArtSigmaDefaults.max_sequence_length, 300);
  const config::ModelDefaults& sd3 = families::kSD3MediumDefaults;
  EXPECT_EQ(sd3.num_inference_steps, 28);
  EXPECT_FLOAT_EQ(sd3.guidance_scale, 7.0F);
  EXPECT_EQ(sd3.max_sequence_length, 256);
  EXPECT_FLOAT_EQ(sd3.scheduler_shift, 3.0F);
  EXPECT_FALSE(sd3.scheduler_dynamic_shift);
  EXPECT_EQ(sd3.clip_sequence_tokens, 77);
  // The THUDM folders': 49 frames of 720×480 at 8 fps (1.5: 81 of 1360×768
  // at 16), 50 steps, guidance 6, T5 at 226 tokens.
  for (const config::ModelDefaults& video :
       {families::kCogVideoX2bDefaults, families::kCogVideoX5bDefaults,
        families::kCogVideoX15Defaults}) {
    const bool v15 = video.name == families::kCogVideoX15Defaults.name;
    EXPECT_EQ(video.width, v15 ? 1360 : 720) << video.name;
    EXPECT_EQ(video.height, v15 ? 768 : 480) << video.name;
    EXPECT_EQ(video.num_frames, v15 ? 81 : 49) << video.name;
    EXPECT_EQ(video.frame_step, v15 ? 16 : 8) << video.name;
    EXPECT_EQ(video.fps, v15 ? 16 : 8) << video.name;
    EXPECT_EQ(video.num_inference_steps, 50) << video.name;
    EXPECT_FLOAT_EQ(video.guidance_scale, 6.0F) << video.name;
    EXPECT_EQ(video.max_sequence_length, 226) << video.name;
    EXPECT_TRUE(video.uses_classifier_free_guidance) << video.name;
    EXPECT_TRUE(video.supports_dynamic_cfg) << video.name;
  }
  EXPECT_TRUE(families::kCogVideoX2bDefaults.fixed_sequence_length);
}

TEST(ServedModelsTest, UnknownModelIsNotFoundAndListsTheServedNames) {
  absl::StatusOr<config::ModelDefaults> found = DefaultsFor("flux-pro");
  ASSERT_EQ(found.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(found.status().message(), HasSubstr("flux-pro"));
  EXPECT_THAT(found.status().message(), HasSubstr("pixart-sigma"));
  EXPECT_EQ(FamilyFor("").status().code(), absl::StatusCode::kNotFound);
}

TEST(ServedModelsTest, ProtoMirrorsTheRow) {
  const config::ModelDefaults& sd3 = families::kSD3MediumDefaults;
  const v1::ModelDefaults proto = config::ToProto(sd3);
  EXPECT_EQ(proto.num_inference_steps(), sd3.num_inference_steps);
  EXPECT_FLOAT_EQ(proto.scheduler_shift(), sd3.scheduler_shift);
  EXPECT_TRUE(proto.uses_classifier_free_guidance());
  EXPECT_EQ(proto.max_sequence_length(), sd3.max_sequence_length);
}

}  // namespace
}  // namespace ditserve::engine
