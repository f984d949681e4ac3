// End to end with the Python client (clients/python) on Debian's
// python3-grpcio: python_client.py calls a real serving group through the
// `ditserve` package and prints what it got as JSON, checked here.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/local_cluster/serving_cluster.h"
#include "tools/local_cluster/shell_command.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ServingCluster;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

void ExpectSmallPng(const nlohmann::json& image) {
  EXPECT_EQ(image["png_signature"], "89504e470d0a1a0a");
  EXPECT_EQ(image["width"], 48);
  EXPECT_EQ(image["height"], 64);
}

TEST(PythonClientE2eTest, GeneratesStreamsAndReportsErrorsThroughThePackage) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string out_dir = ::testing::TempDir() + "/python-client";
  std::filesystem::create_directories(out_dir);
  // The script's stderr goes to the test's own, so stdout is only the JSON.
  absl::StatusOr<std::string> output = local_cluster::ShellOutput(absl::StrCat(
      "PYTHONPATH=", DITSERVE_PYTHONPATH, " PYTHONDONTWRITEBYTECODE=1 ",
      "timeout 240 ", DITSERVE_PYTHON3, " ", DITSERVE_E2E_DIR,
      "/python_client.py ", (*cluster)->address(), " ", out_dir));
  ASSERT_TRUE(output.ok()) << output.status();
  const nlohmann::json summary =
      nlohmann::json::parse(*output, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(summary.is_discarded()) << *output;

  EXPECT_EQ(summary["health"], "SERVING");
  EXPECT_EQ(summary["generation_health"], "SERVING");
  EXPECT_EQ(summary["model"], "flux-dev");

  ASSERT_EQ(summary["generate"].size(), 1U);
  ExpectSmallPng(summary["generate"][0]);
  const std::string saved = out_dir + "/lighthouse.png";
  EXPECT_THAT(summary["saved"].get<std::vector<std::string>>(),
              ElementsAre(saved));
  EXPECT_THAT(ReadFile(saved), StartsWith("\x89PNG\r\n\x1a\n"));

  // One progress callback per denoising step, in order.
  EXPECT_EQ(summary["progress"], nlohmann::json::parse("[[1, 2], [2, 2]]"));
  ASSERT_EQ(summary["stream"].size(), 1U);
  ExpectSmallPng(summary["stream"][0]);
  EXPECT_EQ(summary["stream_equals_generate"], true);

  // 640 x 576 RGB8 came in 1 MiB chunks and was put back together.
  EXPECT_EQ(summary["chunked_bytes"], nlohmann::json::parse("[1105920]"));
  EXPECT_EQ(summary["chunked_equals_generate"], true);

  EXPECT_EQ(summary["bad_height"]["code"], "INVALID_ARGUMENT");
  EXPECT_THAT(summary["bad_height"]["message"].get<std::string>(),
              HasSubstr("height"));
  EXPECT_EQ(summary["unknown_field"]["code"], "ValueError");
  EXPECT_THAT(summary["unknown_field"]["message"].get<std::string>(),
              StartsWith("heigth: GenerateRequest has no such field"));
}

}  // namespace
}  // namespace ditserve::testing
