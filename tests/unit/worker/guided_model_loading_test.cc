#include "worker/guided_model_loading.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/config/parallel_config.h"

namespace ditserve::worker {
namespace {

using ::testing::HasSubstr;

dist::Mesh MeshOf(const config::ParallelFlags& flags, int world_size) {
  absl::StatusOr<v1::ParallelConfig> parallel =
      config::MakeParallelConfig(flags, world_size);
  EXPECT_TRUE(parallel.ok()) << parallel.status();
  absl::StatusOr<dist::Mesh> mesh = dist::Mesh::Create(*parallel);
  EXPECT_TRUE(mesh.ok()) << mesh.status();
  return *mesh;
}

TEST(GuidedModelLoadingTest, DataAndCfgParallelAreServed) {
  EXPECT_TRUE(
      CheckGuidedFamilyParallelism(MeshOf({.dp_degree = 2, .cfg_degree = 2}, 4),
                                   config::ModelFamily::kSd3Medium)
          .ok());
}

TEST(GuidedModelLoadingTest, UnservedMethodsAreUnimplementedNamingTheFlag) {
  for (const auto& [flags, needle] :
       {std::pair{config::ParallelFlags{.ulysses_degree = 2},
                  "--ulysses_degree 2: pixart-sigma"},
        std::pair{config::ParallelFlags{.ring_degree = 2},
                  "--ring_degree 2: pixart-sigma"},
        std::pair{config::ParallelFlags{.pipefusion_degree = 2},
                  "--pipefusion_degree 2: pixart-sigma"}}) {
    const absl::Status status = CheckGuidedFamilyParallelism(
        MeshOf(flags, 2), config::ModelFamily::kPixArtSigma);
    EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << needle;
    EXPECT_THAT(std::string(status.message()), HasSubstr(needle));
  }
}

}  // namespace
}  // namespace ditserve::worker
