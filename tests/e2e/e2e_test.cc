// End to end with real third-party clients: a gRPC reflection client that
// knows none of ditserve's .proto files (Node.js, as grpcurl works), and a
// real Prometheus server scraping the host.

#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/local_cluster/prometheus_server.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ContextWithDeadline;
using ::ditserve::local_cluster::PrometheusServer;
using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::SmallRequest;

using ::testing::Contains;
using ::testing::IsSupersetOf;

// stdout of `command`, or an error with its exit status.
absl::StatusOr<std::string> RunCommand(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return absl::InternalError("popen failed");
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    output.append(buffer, n);
  }
  const int status = ::pclose(pipe);
  if (status != 0) {
    return absl::InternalError(
        absl::StrCat("`", command, "` exited with ", status, ": ", output));
  }
  return output;
}

TEST(ReflectionE2eTest, ClientBuiltFromReflectionListsDescribesAndCalls) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string request = R"({"prompt": ["a lighthouse at dusk"],
      "height": 64, "width": 48, "num_inference_steps": 2, "seed": "3",
      "max_sequence_length": 32})";
  absl::StatusOr<std::string> output = RunCommand(absl::StrCat(
      "timeout 300 node ", DITSERVE_E2E_DIR, "/reflection_client.js ",
      (*cluster)->address(), " '", request, "' 2>&1"));
  ASSERT_TRUE(output.ok()) << output.status();
  const nlohmann::json summary = nlohmann::json::parse(*output);
  EXPECT_THAT(summary["services"].get<std::vector<std::string>>(),
              IsSupersetOf({"ditserve.v1.Generation", "grpc.health.v1.Health",
                            "grpc.reflection.v1alpha.ServerReflection"}));
  EXPECT_THAT(summary["methods"].get<std::vector<std::string>>(),
              IsSupersetOf({"Generate", "GenerateStream", "GetServerInfo"}));
  EXPECT_EQ(summary["health"], "SERVING");
  EXPECT_EQ(summary["model"], "flux-dev");
  ASSERT_EQ(summary["images"].size(), 1U);
  const nlohmann::json& image = summary["images"][0];
  EXPECT_EQ(image["mime_type"], "image/png");
  EXPECT_EQ(image["width"], 48);
  EXPECT_EQ(image["height"], 64);
  EXPECT_EQ(image["png_signature"], "89504e470d0a1a0a");
  EXPECT_EQ(summary["config"]["num_inference_steps"], 2);
}

TEST(PrometheusE2eTest, RealPrometheusScrapesStageHistograms) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 2, .rank_flags = {"--dp_degree=2"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::GenerateResponse response;
  {
    auto context = ContextWithDeadline(120);
    const grpc::Status status = (*cluster)->generation().Generate(
        context.get(), SmallRequest("scraped"), &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  absl::StatusOr<std::unique_ptr<PrometheusServer>> prometheus =
      PrometheusServer::Start((*cluster)->metrics_port());
  ASSERT_TRUE(prometheus.ok()) << prometheus.status();

  double scraped = 0;
  for (int attempt = 0; attempt < 120 && scraped < 1; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    absl::StatusOr<nlohmann::json> data =
        (*prometheus)
            ->Query("ditserve_stage_duration_seconds_count{stage=\"denoise\"}");
    if (!data.ok() || (*data)["result"].empty()) continue;
    scraped = std::stod((*data)["result"][0]["value"][1].get<std::string>());
  }
  EXPECT_EQ(scraped, 1) << (*prometheus)->Output();
}

}  // namespace
}  // namespace ditserve::testing
