#include "core/engine/family_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "core/engine/write_checkpoint.h"
#include "core/families/flux/flux_defaults.h"
#include "core/families/sd3/sd3_defaults.h"

namespace ditserve::engine {
namespace {

using ::testing::HasSubstr;

TEST(FamilyRegistryTest, EveryServedModelHasExactlyOneFamily) {
  for (const config::ModelDefaults& row : ServedModels()) {
    int serving = 0;
    for (const families::Family* family : RegisteredFamilies()) {
      for (const config::ModelDefaults& served : family->serves()) {
        serving += served.name == row.name ? 1 : 0;
      }
    }
    EXPECT_EQ(serving, 1) << row.name;
    absl::StatusOr<const families::Family*> found = FamilyFor(row.name);
    EXPECT_TRUE(found.ok()) << found.status();
  }
}

TEST(FamilyRegistryTest, NoPipelineClassIsRunByTwoFamilies) {
  std::set<std::string> classes;
  for (const families::Family* family : RegisteredFamilies()) {
    for (const std::string& pipeline_class : family->pipeline_classes()) {
      EXPECT_TRUE(classes.insert(pipeline_class).second) << pipeline_class;
    }
  }
}

// What a family writes, it detects as the same served model: the random
// checkpoint writer and Detect agree on the pipeline class and the variant.
TEST(FamilyRegistryTest,
     EveryRandomCheckpointIsDetectedAsTheModelItWasWrittenAs) {
  const std::filesystem::path root =
      std::filesystem::path(::testing::TempDir()) / "family_registry_test";
  std::filesystem::remove_all(root);
  for (const config::ModelDefaults& row : ServedModels()) {
    const std::string dir = (root / std::string(row.name)).string();
    const absl::Status written = WriteCheckpoint(
        row.name, checkpoints::CheckpointPreset::kTiny, /*seed=*/0, dir);
    ASSERT_TRUE(written.ok()) << written;
    absl::StatusOr<config::ModelSpec> spec = ReadModelSpec(dir);
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(spec->defaults.name, row.name);
  }
  std::filesystem::remove_all(root);
}

TEST(FamilyRegistryTest, AFamilyOfAnotherModelIsNotServingIt) {
  absl::StatusOr<const families::Family*> flux =
      FamilyFor(families::kFluxDevDefaults.name);
  ASSERT_TRUE(flux.ok()) << flux.status();
  const absl::Status written = (*flux)->WriteRandomCheckpoint(
      families::kSD3MediumDefaults, checkpoints::CheckpointPreset::kTiny, 0,
      (std::filesystem::path(::testing::TempDir()) / "not_flux").string());
  EXPECT_EQ(written.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(written.message(), HasSubstr("sd3-medium"));
}

}  // namespace
}  // namespace ditserve::engine
