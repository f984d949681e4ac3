#include "core/config/model_defaults.h"

#include <set>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ditserve::config {
namespace {

using ::testing::HasSubstr;

TEST(ModelDefaultsTest, AllFamilyDefaultsCoverEveryFamily) {
  std::set<ModelFamily> families;
  for (const FamilyDefaults& row : AllFamilyDefaults()) {
    families.insert(row.family);
    EXPECT_EQ(DefaultsFor(row.family).name, row.name);
    EXPECT_EQ(*ParseModelFamily(row.name), row.family);
  }
  EXPECT_EQ(families.size(), 5U);
}

TEST(ModelDefaultsTest, TableHoldsTheDocumentedDefaults) {
  const FamilyDefaults& dev = DefaultsFor(ModelFamily::kFluxDev);
  EXPECT_EQ(dev.height, 1024);
  EXPECT_EQ(dev.num_inference_steps, 28);
  EXPECT_FLOAT_EQ(dev.guidance_scale, 3.5F);
  EXPECT_TRUE(dev.uses_guidance_embedding);
  EXPECT_EQ(dev.max_sequence_length, 512);
  EXPECT_TRUE(dev.scheduler_dynamic_shift);
  const FamilyDefaults& schnell = DefaultsFor(ModelFamily::kFluxSchnell);
  EXPECT_EQ(schnell.num_inference_steps, 4);
  EXPECT_FLOAT_EQ(schnell.guidance_scale, 0.0F);
  EXPECT_EQ(schnell.max_sequence_length, 256);
  const FamilyDefaults& alpha = DefaultsFor(ModelFamily::kPixArtAlpha);
  EXPECT_EQ(alpha.num_inference_steps, 20);
  EXPECT_FLOAT_EQ(alpha.guidance_scale, 4.5F);
  EXPECT_EQ(alpha.max_sequence_length, 120);
  EXPECT_EQ(alpha.scheduler, v1::SCHEDULER_KIND_DPM_SOLVER_MULTISTEP);
  EXPECT_EQ(DefaultsFor(ModelFamily::kPixArtSigma).max_sequence_length, 300);
  const FamilyDefaults& sd3 = DefaultsFor(ModelFamily::kSd3Medium);
  EXPECT_EQ(sd3.num_inference_steps, 28);
  EXPECT_FLOAT_EQ(sd3.guidance_scale, 7.0F);
  EXPECT_EQ(sd3.max_sequence_length, 256);
  EXPECT_FLOAT_EQ(sd3.scheduler_shift, 3.0F);
  EXPECT_FALSE(sd3.scheduler_dynamic_shift);
}

TEST(ModelDefaultsTest, UnknownFamilyIsNotFoundAndListsKnownNames) {
  absl::StatusOr<ModelFamily> parsed = ParseModelFamily("flux-pro");
  ASSERT_EQ(parsed.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(parsed.status().message(), HasSubstr("flux-pro"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("pixart-sigma"));
}

TEST(ModelDefaultsTest, ProtoMirrorsTheRow) {
  const FamilyDefaults& sd3 = DefaultsFor(ModelFamily::kSd3Medium);
  const v1::ModelDefaults proto = ToProto(sd3);
  EXPECT_EQ(proto.num_inference_steps(), sd3.num_inference_steps);
  EXPECT_FLOAT_EQ(proto.scheduler_shift(), sd3.scheduler_shift);
  EXPECT_TRUE(proto.uses_classifier_free_guidance());
}

}  // namespace
}  // namespace ditserve::config
