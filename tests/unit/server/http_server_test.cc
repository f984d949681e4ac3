#include "server/http_server.h"

#include <httplib.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/bearer_auth.h"
#include "server/metrics.h"
#include "tools/local_cluster/http_get.h"
#include "tools/local_cluster/rank_launcher.h"

namespace ditserve::server {
namespace {

using ::testing::HasSubstr;

// This binary links LibTorch and OpenBLAS, whose static TLS made
// prometheus-cpp's civetweb exposer fail to start its threads.
TEST(MetricsEndpointTest, ServesTheRegistryInPrometheusTextFormat) {
  Metrics metrics("flux-dev", 2, {"0.1.0", "1.13.1", "cpu", "float32"});
  metrics.CountRequest("ok", kNoClient);
  absl::StatusOr<int> port = metrics.Serve("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status();
  ASSERT_GT(*port, 0);

  absl::StatusOr<std::string> body = local_cluster::HttpGet(*port, "/metrics");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_THAT(*body, HasSubstr("# TYPE ditserve_requests_total counter"));
  // One series per status: the one counted, not a second at zero beside it.
  std::vector<std::string> ok_series;
  for (absl::string_view line : absl::StrSplit(*body, '\n')) {
    if (absl::StartsWith(line, "ditserve_requests_total{") &&
        absl::StrContains(line, "status=\"ok\"")) {
      ok_series.emplace_back(line);
    }
  }
  EXPECT_THAT(ok_series,
              ::testing::ElementsAre(
                  "ditserve_requests_total{client=\"\",model=\"flux-dev\","
                  "status=\"ok\"} 1"));
  // Series exist at zero before their first event, so rate() sees it.
  EXPECT_THAT(*body, HasSubstr("status=\"invalid_argument\"} 0"));
  EXPECT_THAT(*body, HasSubstr("rank=\"1\",stage=\"denoise\""));
  EXPECT_THAT(*body, HasSubstr("ditserve_world_size 2"));
}

// A named client's series exist at zero before its first request, as the
// unnamed client's do, so that rate() counts that request.
TEST(MetricsEndpointTest, NamedClientsSeriesStartAtZero) {
  Metrics metrics("flux-dev", 1, {"0.1.0", "1.13.1", "cpu", "float32"});
  metrics.AddClients({"batch", "web-app"});
  metrics.CountRequest("ok", "batch");
  absl::StatusOr<int> port = metrics.Serve("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status();
  absl::StatusOr<std::string> body = local_cluster::HttpGet(*port, "/metrics");
  ASSERT_TRUE(body.ok()) << body.status();
  int web_app_series = 0;
  for (absl::string_view line : absl::StrSplit(*body, '\n')) {
    if (absl::StartsWith(line, "ditserve_requests_total{client=\"web-app\"")) {
      EXPECT_TRUE(absl::EndsWith(line, "} 0")) << line;
      ++web_app_series;
    }
  }
  EXPECT_EQ(web_app_series,
            static_cast<int>(absl::StatusCode::kUnauthenticated) + 1)
      << "one per gRPC status code";
  EXPECT_THAT(*body,
              HasSubstr("ditserve_requests_total{client=\"batch\",model=\"flux-"
                        "dev\",status=\"ok\"} 1"));
}

TEST(MetricsEndpointTest, OtherPathsAreNotFound) {
  Metrics metrics("flux-dev", 1, {"0.1.0", "1.13.1", "cpu", "float32"});
  absl::StatusOr<int> port = metrics.Serve("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status();
  absl::StatusOr<std::string> body = local_cluster::HttpGet(*port, "/other");
  EXPECT_FALSE(body.ok());
  EXPECT_THAT(std::string(body.status().message()), HasSubstr("404"));
}

// The hand-written server this replaced answered one connection at a time,
// so three silent connections delayed a scrape by three read timeouts (15 s,
// longer than HttpGet's 10 s timeout).
TEST(MetricsEndpointTest, ScrapesAreAnsweredWhileSilentConnectionsStayOpen) {
  Metrics metrics("flux-dev", 1, {"0.1.0", "1.13.1", "cpu", "float32"});
  absl::StatusOr<int> port = metrics.Serve("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status();
  std::vector<int> silent;
  for (int i = 0; i < 3; ++i)
    silent.push_back(local_cluster::ConnectToLoopback(*port));
  absl::StatusOr<std::string> body = local_cluster::HttpGet(*port, "/metrics");
  EXPECT_TRUE(body.ok()) << body.status();
  for (int fd : silent) ::close(fd);
}

TEST(HttpServerTest, TakenPortIsUnavailableNamingTheAddress) {
  const auto no_routes = [](httplib::Server&) {};
  absl::StatusOr<std::unique_ptr<HttpServer>> first =
      HttpServer::Start("127.0.0.1", 0, 2, no_routes);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<HttpServer>> second =
      HttpServer::Start("127.0.0.1", (*first)->port(), 2, no_routes);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr(absl::StrCat("127.0.0.1:", (*first)->port())));
}

TEST(HttpServerTest, StopsPromptlyRightAfterStarting) {
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<std::unique_ptr<HttpServer>> server =
        HttpServer::Start("127.0.0.1", 0, 1, [](httplib::Server&) {});
    ASSERT_TRUE(server.ok()) << server.status();
  }
}

}  // namespace
}  // namespace ditserve::server
