#include "server/metrics_http_server.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "tools/local_cluster/http_get.h"

namespace ditserve::server {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<prometheus::Registry> RegistryWithOneCounter() {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter()
      .Name("ditserve_test_events_total")
      .Help("events seen by the test")
      .Register(*registry)
      .Add({{"kind", "scrape"}})
      .Increment(3);
  return registry;
}

// This binary links LibTorch and OpenBLAS, whose static TLS made
// prometheus-cpp's civetweb exposer fail to start its threads.
TEST(MetricsHttpServerTest, ServesTheRegistryInPrometheusTextFormat) {
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::Start("127.0.0.1", 0, RegistryWithOneCounter());
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_GT((*server)->port(), 0);

  absl::StatusOr<std::string> body =
      local_cluster::HttpGet((*server)->port(), "/metrics");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_THAT(*body, HasSubstr("# TYPE ditserve_test_events_total counter"));
  EXPECT_THAT(*body,
              HasSubstr("ditserve_test_events_total{kind=\"scrape\"} 3"));
}

TEST(MetricsHttpServerTest, OtherPathsAreNotFound) {
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::Start("127.0.0.1", 0, RegistryWithOneCounter());
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::string> body =
      local_cluster::HttpGet((*server)->port(), "/other");
  EXPECT_FALSE(body.ok());
  EXPECT_THAT(std::string(body.status().message()), HasSubstr("404"));
}

TEST(MetricsHttpServerTest, TakenPortIsUnavailableNamingTheAddress) {
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> first =
      MetricsHttpServer::Start("127.0.0.1", 0, RegistryWithOneCounter());
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<MetricsHttpServer>> second =
      MetricsHttpServer::Start("127.0.0.1", (*first)->port(),
                               RegistryWithOneCounter());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr(absl::StrCat("127.0.0.1:", (*first)->port())));
}

}  // namespace
}  // namespace ditserve::server
