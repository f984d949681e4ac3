// End to end with real third-party clients: a gRPC reflection client that
// knows none of ditserve's .proto files (Node.js, as grpcurl works), the
// official OpenAI SDK on the HTTP API, and a real Prometheus server scraping
// the host.

#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/local_cluster/prometheus_server.h"
#include "tools/local_cluster/serving_cluster.h"
#include "tools/local_cluster/shell_command.h"
#include "tools/local_cluster/streamed_generation.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ContextWithDeadline;
using ::ditserve::local_cluster::PrometheusServer;
using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::SmallRequest;

using ::testing::Contains;
using ::testing::IsSupersetOf;

TEST(ReflectionE2eTest, ClientBuiltFromReflectionListsDescribesAndCalls) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string request = R"({"prompt": ["a lighthouse at dusk"],
      "height": 64, "width": 48, "num_inference_steps": 2, "seed": "3",
      "max_sequence_length": 32})";
  absl::StatusOr<std::string> output = local_cluster::ShellOutput(absl::StrCat(
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

// The official openai npm package (client.images.generate) against the
// HTTP API: images equal to gRPC's for the same fields, and OpenAI's error
// classes for refused requests.
TEST(OpenAiSdkE2eTest, ImagesGenerateReturnsTheGrpcImagesAndTypedErrors) {
  // 256 MiB: every request below needs a few MiB but the one that is
  // refused for its size (1024², about 700 MiB).
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1, .host_flags = {"--max_request_bytes=268435456"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  absl::StatusOr<std::string> output = local_cluster::ShellOutput(absl::StrCat(
      "timeout 300 node ", DITSERVE_E2E_DIR, "/openai_client.js http://",
      "127.0.0.1:", (*cluster)->http_port(), "/v1 flux-dev 2>&1"));
  ASSERT_TRUE(output.ok()) << output.status();
  const nlohmann::json summary = nlohmann::json::parse(*output);

  v1::GenerateRequest request = SmallRequest("a lighthouse at dusk");
  request.add_prompt("a lighthouse at dusk");
  v1::GenerateResponse expected;
  auto context = ContextWithDeadline(120);
  const grpc::Status status =
      (*cluster)->generation().Generate(context.get(), request, &expected);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(summary["images"].size(), 2U);
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json& image = summary["images"][i];
    EXPECT_EQ(image["png_signature"], "89504e470d0a1a0a");
    EXPECT_EQ(image["width"], 48);
    EXPECT_EQ(image["height"], 64);
    std::string png;
    ASSERT_TRUE(
        absl::Base64Unescape(image["b64_json"].get<std::string>(), &png));
    EXPECT_EQ(png, expected.images(i).data()) << "image " << i;
  }
  EXPECT_EQ(summary["seed"], "7");
  EXPECT_EQ(summary["models"], nlohmann::json::array({"flux-dev"}));

  // The SDK's stream: one event per step, then the image, the bytes gRPC
  // gives the same one-image request. Not those of the first image above:
  // two images denoised in one forward may round differently (README,
  // "Serving"), as LibTorch 2.6's kernels do.
  v1::GenerateResponse expected_alone;
  auto alone_context = ContextWithDeadline(120);
  const grpc::Status alone_status = (*cluster)->generation().Generate(
      alone_context.get(), SmallRequest("a lighthouse at dusk"),
      &expected_alone);
  ASSERT_TRUE(alone_status.ok()) << alone_status.error_message();
  const nlohmann::json& streamed = summary["streamed"];
  ASSERT_EQ(streamed.size(), 3U) << streamed.dump();
  EXPECT_EQ(streamed[0]["type"], "ditserve.progress");
  EXPECT_EQ(streamed[1]["step"], 2);
  EXPECT_EQ(streamed[2]["type"], "image_generation.completed");
  std::string streamed_png;
  ASSERT_TRUE(absl::Base64Unescape(streamed[2]["b64_json"].get<std::string>(),
                                   &streamed_png));
  EXPECT_TRUE(streamed_png == expected_alone.images(0).data());

  // partial_images 2 over 3 steps: previews after steps 1 and 2, in order
  // before the image, each the bytes gRPC streams for the same request.
  v1::GenerateRequest previewed_request = SmallRequest("a lighthouse at dusk");
  previewed_request.set_num_inference_steps(3);
  previewed_request.set_partial_images(2);
  absl::StatusOr<local_cluster::StreamedGeneration> grpc_previewed =
      local_cluster::StreamGeneration(**cluster, previewed_request, 120);
  ASSERT_TRUE(grpc_previewed.ok()) << grpc_previewed.status();
  ASSERT_EQ(grpc_previewed->partial_images.size(), 2U);
  const nlohmann::json& previewed = summary["previewed"];
  ASSERT_EQ(previewed.size(), 3U) << previewed.dump();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(previewed[i]["type"], "image_generation.partial_image");
    EXPECT_EQ(previewed[i]["partial_image_index"], i);
    EXPECT_EQ(previewed[i]["step"], i + 1);
    EXPECT_EQ(previewed[i]["size"], "48x64");
    std::string png;
    ASSERT_TRUE(absl::Base64Unescape(
        previewed[i]["b64_json"].get<std::string>(), &png));
    EXPECT_TRUE(png == grpc_previewed->partial_images[i].image().data())
        << "preview " << i;
    EXPECT_NE(previewed[i]["b64_json"], previewed[2]["b64_json"]);
  }
  EXPECT_EQ(previewed[2]["type"], "image_generation.completed");
  EXPECT_EQ(summary["unstreamed_previews"]["status"], 400);
  EXPECT_EQ(summary["unstreamed_previews"]["param"], "partial_images");

  // output_compression is the quality gRPC's output_quality sets: the same
  // pixels encoded alike give the same bytes.
  request.clear_prompt();
  request.add_prompt("a lighthouse at dusk");
  request.set_output_format(v1::OUTPUT_FORMAT_JPEG);
  request.set_output_quality(80);
  v1::GenerateResponse expected_jpeg;
  auto jpeg_context = ContextWithDeadline(120);
  const grpc::Status jpeg_status = (*cluster)->generation().Generate(
      jpeg_context.get(), request, &expected_jpeg);
  ASSERT_TRUE(jpeg_status.ok()) << jpeg_status.error_message();
  EXPECT_EQ(summary["jpeg"]["output_format"], "jpeg");
  std::string jpeg;
  ASSERT_TRUE(absl::Base64Unescape(
      summary["jpeg"]["b64_json"].get<std::string>(), &jpeg));
  EXPECT_EQ(jpeg, expected_jpeg.images(0).data());
  EXPECT_EQ(summary["bad_compression"]["status"], 400);
  EXPECT_EQ(summary["bad_compression"]["param"], "output_compression");

  EXPECT_EQ(summary["bad_size"]["status"], 400);
  EXPECT_EQ(summary["bad_size"]["class"], "BadRequestError");
  EXPECT_THAT(summary["bad_size"]["message"].get<std::string>(),
              ::testing::HasSubstr("width 50"));
  EXPECT_EQ(summary["too_many"]["param"], "n");
  EXPECT_EQ(summary["url_format"]["param"], "response_format");
  EXPECT_EQ(summary["hd_quality"]["status"], 400);
  EXPECT_EQ(summary["hd_quality"]["param"], "quality");
  EXPECT_EQ(summary["other_model"]["status"], 404);
  EXPECT_EQ(summary["other_model"]["class"], "NotFoundError");

  // The SDK retries a 429 twice by default; this one it was told not to, so
  // the host saw it once.
  EXPECT_EQ(summary["too_large"]["status"], 429);
  EXPECT_EQ(summary["too_large"]["class"], "RateLimitError");
  EXPECT_THAT(summary["too_large"]["message"].get<std::string>(),
              ::testing::HasSubstr("above --max_request_bytes"));
  absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(local_cluster::MetricValue(*metrics, "ditserve_requests_total",
                                       {"status=\"resource_exhausted\""}),
            1);
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
