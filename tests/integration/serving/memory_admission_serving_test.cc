// --max_request_bytes on a real host: a request whose memory estimate is
// above it is refused before it is queued; smaller ones still run.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ContextWithDeadline;
using ::ditserve::local_cluster::MetricValue;
using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::SmallRequest;
using ::ditserve::local_cluster::StartUpFailure;
using ::testing::HasSubstr;

// 256 MiB: a 64×48 image of the built-in tiny model needs a few MiB, a
// 1024×1024 one about 700.
constexpr int64_t kLimit = int64_t{256} << 20;

TEST(MemoryAdmissionServingTest,
     RequestAboveTheLimitIsRefusedNamingItsEstimate) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1,
           .host_flags = {"--max_request_bytes=" + std::to_string(kLimit)}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();

  v1::GenerateRequest large = SmallRequest("too large");
  large.set_height(1024);
  large.set_width(1024);
  absl::StatusOr<v1::GenerateResponse> refused =
      (*cluster)->Generate(large, 60);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted)
      << refused.status();
  EXPECT_THAT(refused.status().message(),
              HasSubstr("request needs an estimated "));
  EXPECT_THAT(refused.status().message(),
              HasSubstr("(1024x1024, 1 image), above --max_request_bytes "
                        "268435456 (256 MiB)"));
  // Generate streams no previews: its refusal names partial_images before
  // the estimate, which previews raise, is weighed.
  large.set_partial_images(1);
  absl::StatusOr<v1::GenerateResponse> previewed =
      (*cluster)->Generate(large, 60);
  EXPECT_EQ(previewed.status().code(), absl::StatusCode::kInvalidArgument)
      << previewed.status();
  EXPECT_THAT(previewed.status().message(), HasSubstr("needs GenerateStream"));

  absl::StatusOr<v1::GenerateResponse> small =
      (*cluster)->Generate(SmallRequest("small"), 60);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->images_size(), 1);

  absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricValue(*metrics, "ditserve_requests_total",
                        {"status=\"resource_exhausted\""}),
            1);
  EXPECT_EQ(MetricValue(*metrics, "ditserve_requests_total", {"status=\"ok\""}),
            1);

  v1::ServerInfo info;
  auto context = ContextWithDeadline(10);
  const grpc::Status got =
      (*cluster)->generation().GetServerInfo(context.get(), {}, &info);
  ASSERT_TRUE(got.ok()) << got.error_message();
  EXPECT_EQ(info.limits().max_request_bytes(), kLimit);
}

// The refusal is the same however often the request is sent, so a client
// whose gRPC retry policy covers RESOURCE_EXHAUSTED is told not to retry it
// (a negative grpc-retry-pushback-ms): the host sees it once.
TEST(MemoryAdmissionServingTest, ARetryPolicyDoesNotRetryTheRefusal) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1,
           .host_flags = {"--max_request_bytes=" + std::to_string(kLimit)}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  grpc::ChannelArguments arguments;
  arguments.SetServiceConfigJSON(R"({"methodConfig": [{
      "name": [{"service": "ditserve.v1.Generation"}],
      "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.1s",
                      "maxBackoff": "0.2s", "backoffMultiplier": 2,
                      "retryableStatusCodes": ["RESOURCE_EXHAUSTED"]}}]})");
  std::unique_ptr<v1::Generation::Stub> with_retry_policy =
      v1::Generation::NewStub(grpc::CreateCustomChannel(
          (*cluster)->address(), grpc::InsecureChannelCredentials(),
          arguments));
  v1::GenerateRequest large = SmallRequest("too large");
  large.set_height(1024);
  large.set_width(1024);
  v1::GenerateResponse response;
  auto context = ContextWithDeadline(60);
  const grpc::Status refused =
      with_retry_policy->Generate(context.get(), large, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << refused.error_message();
  absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricValue(*metrics, "ditserve_requests_total",
                        {"status=\"resource_exhausted\""}),
            1);
}

TEST(MemoryAdmissionServingTest, NegativeLimitFailsStartUpNamingTheFlag) {
  EXPECT_THAT(StartUpFailure(
                  {.world_size = 1, .host_flags = {"--max_request_bytes=-1"}}),
              HasSubstr("--max_request_bytes -1: allowed 0 or more"));
}

}  // namespace
}  // namespace ditserve::testing
