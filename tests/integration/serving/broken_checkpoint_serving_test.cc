// A checkpoint folder an operator got wrong stops start-up within seconds
// naming the cause, and one that is only odd serves; the host never aborts
// or hangs on it.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/families/flux/flux_defaults.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/serving/tiny_model_cluster.h"
#include "tools/local_cluster/rank_launcher.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::testing {
namespace {

namespace fs = std::filesystem;
using ::ditserve::local_cluster::LaunchRanks;
using ::ditserve::local_cluster::RankExit;
using ::ditserve::local_cluster::RankLauncher;
using ::testing::HasSubstr;

// A copy of the tiny FLUX.1-dev checkpoint that the test may damage.
fs::path CopyOfTinyCheckpoint() {
  const std::string source = TinyCheckpoint(families::kFluxDevDefaults);
  const fs::path copy =
      fs::path(::testing::TempDir()) /
      ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(copy);
  fs::copy(source, copy, fs::copy_options::recursive);
  return copy;
}

// Modules allocate their weights from config.json before those are compared
// with the checkpoint's: 10^9 heads asked LibTorch for terabytes, and the
// exception it threw ended the host with SIGABRT.
TEST(BrokenCheckpointStartupTest, AbsurdConfigSizesFailNamingTheLoad) {
  const fs::path model_dir = CopyOfTinyCheckpoint();
  const fs::path config_path = model_dir / "transformer" / "config.json";
  std::stringstream text;
  text << std::ifstream(config_path).rdbuf();
  nlohmann::json config = nlohmann::json::parse(text.str());
  config["num_attention_heads"] = 1000000000;
  std::ofstream(config_path) << config.dump();

  absl::StatusOr<std::unique_ptr<RankLauncher>> ranks = LaunchRanks(
      {.world_size = 1, .rank_flags = {"--model_dir=" + model_dir.string()}});
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  const std::vector<RankExit> exits =
      (*ranks)->WaitAll(std::chrono::seconds(60));
  ASSERT_EQ(exits.size(), 1U);
  EXPECT_FALSE(exits[0].timed_out);
  EXPECT_EQ(exits[0].exit_code, 1) << (*ranks)->Output(0);
  EXPECT_THAT((*ranks)->Output(0),
              HasSubstr("loading the model from " + model_dir.string()));
}

// Links that loop do not stop start-up: two links to the parent folder made
// the walk over the folder's weight files grow without end, and a file
// linked to itself ended the host with an uncaught filesystem_error.
TEST(BrokenCheckpointStartupTest, LinkLoopsInTheFolderStillServe) {
  const fs::path model_dir = CopyOfTinyCheckpoint();
  fs::create_directories(model_dir / "extra");
  fs::create_directory_symlink("..", model_dir / "extra" / "a");
  fs::create_directory_symlink("..", model_dir / "extra" / "b");
  fs::create_symlink("itself.safetensors", model_dir / "itself.safetensors");
  EXPECT_NE(StartCluster(model_dir.string(), 1, {}), nullptr);
}

}  // namespace
}  // namespace ditserve::testing
