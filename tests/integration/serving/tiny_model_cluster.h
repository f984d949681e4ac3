#ifndef DITSERVE_TESTS_INTEGRATION_SERVING_TINY_MODEL_CLUSTER_H_
#define DITSERVE_TESTS_INTEGRATION_SERVING_TINY_MODEL_CLUSTER_H_

// What the serving tests of a served model other than the default share: its
// tiny random checkpoint and a group serving it.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/config/model_defaults.h"
#include "core/engine/write_checkpoint.h"
#include "gtest/gtest.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::testing {

// The tiny random checkpoint of `model` (written once into the test cache).
inline std::string TinyCheckpoint(const config::ModelDefaults& model) {
  absl::StatusOr<std::string> model_dir =
      engine::CachedCheckpoint(model.name, checkpoints::CheckpointPreset::kTiny,
                               /*seed=*/0, DITSERVE_TEST_MODEL_CACHE);
  EXPECT_TRUE(model_dir.ok()) << model_dir.status();
  return model_dir.ok() ? *model_dir : "";
}

// A group of `world_size` ranks serving `model_dir` with `flags`; null (and a
// failed expectation) when it does not start.
inline std::unique_ptr<local_cluster::ServingCluster> StartCluster(
    const std::string& model_dir, int world_size,
    std::vector<std::string> flags) {
  flags.push_back("--model_dir=" + model_dir);
  absl::StatusOr<std::unique_ptr<local_cluster::ServingCluster>> cluster =
      local_cluster::ServingCluster::Start(
          {.world_size = world_size, .rank_flags = std::move(flags)});
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return cluster.ok() ? *std::move(cluster) : nullptr;
}

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_INTEGRATION_SERVING_TINY_MODEL_CLUSTER_H_
