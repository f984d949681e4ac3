#include "server/http_server.h"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/bearer_auth.h"
#include "server/metrics.h"
#include "server/peer_socket.h"
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

// This process's resident memory, from /proc/self/status.
int64_t ResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "VmRSS:")) {
      int64_t kib = 0;
      EXPECT_TRUE(
          absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::StripSuffix(
                               absl::StripPrefix(line, "VmRSS:"), "kB")),
                           &kib))
          << line;
      return kib << 10;
    }
  }
  ADD_FAILURE() << "no VmRSS in /proc/self/status";
  return 0;
}

void SendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, 0);
    ASSERT_GT(n, 0) << "the server stopped reading";
    sent += static_cast<size_t>(n);
  }
}

// What arrives on `fd` until the server closes it or `seconds` pass in
// silence.
std::string ReceiveUntilClosed(int fd, int seconds) {
  const timeval timeout{.tv_sec = seconds, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::string received;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) {
    received.append(buffer, static_cast<size_t>(n));
  }
  return received;
}

// The head of one response on `fd` (those read with it have no body), read
// a byte at a time so that nothing after it is taken.
std::string ReceiveHead(int fd) {
  const timeval timeout{.tv_sec = 10, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::string head;
  char byte;
  while (!absl::EndsWith(head, "\r\n\r\n") && ::recv(fd, &byte, 1, 0) == 1) {
    head.push_back(byte);
  }
  return head;
}

// /metrics takes no body, so cpp-httplib found no route for one and held it
// whole in memory first: anyone who could reach the port could fill rank
// 0's memory with a chunked POST, or on any port with a chunked PRI, for
// which cpp-httplib has no route type. Midway through 96 MiB the server
// holds little more than its socket buffers, and the connection serves the
// next request after the refusal. (cpp-httplib drops what a client sends
// ahead of its answer to the request before, so each request waits for it.)
TEST(MetricsEndpointTest, ABodyNoRouteTakesIsDroppedAsItArrives) {
  Metrics metrics("flux-dev", 1, {"0.1.0", "1.13.1", "cpu", "float32"});
  absl::StatusOr<int> port = metrics.Serve("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status();
  const std::string chunk =
      absl::StrCat("100000\r\n", std::string(size_t{1} << 20, 'x'), "\r\n");
  for (const std::string method : {"POST", "PRI"}) {
    const int fd = local_cluster::ConnectToLoopback(*port);
    ASSERT_GE(fd, 0);
    const int64_t resident_before = ResidentBytes();
    SendAll(fd, absl::StrCat(method,
                             " /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "Transfer-Encoding: chunked\r\n\r\n"));
    for (int i = 0; i < 96; ++i) SendAll(fd, chunk);
    EXPECT_LT(ResidentBytes() - resident_before, int64_t{32} << 20) << method;
    SendAll(fd, "0\r\n\r\n");
    EXPECT_TRUE(absl::StartsWith(ReceiveHead(fd), "HTTP/1.1 404")) << method;
    SendAll(fd,
            "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Connection: close\r\n\r\n");
    const std::string received = ReceiveUntilClosed(fd, 10);
    ::close(fd);
    EXPECT_TRUE(absl::StartsWith(received, "HTTP/1.1 200")) << method;
    EXPECT_THAT(received, HasSubstr("ditserve_world_size 1")) << method;
  }
}

// A request whose body cpp-httplib would leave unread, and how its server
// answers it.
struct UnreadBodyCase {
  std::string method;
  // The header that frames the body.
  std::string framing;
  // The body, holding a request of its own.
  std::string body;
  std::string status_line;
};

// A GET of /ping inside a body, framed by each header.
const std::string kSmuggledPing = "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n";
const std::string kChunked = "Transfer-Encoding: chunked";
const std::string kChunkedSmuggledPing =
    absl::StrCat("1f\r\n", kSmuggledPing, "\r\n0\r\n\r\n");
const std::string kLengthOfSmuggledPing =
    absl::StrCat("Content-Length: ", kSmuggledPing.size());

// A server whose one route, GET /ping, answers "pong".
absl::StatusOr<std::unique_ptr<HttpServer>> StartPingServer() {
  return HttpServer::Start("127.0.0.1", 0, 2, [](httplib::Server& routes) {
    routes.Get("/ping",
               [](const httplib::Request&, httplib::Response& response) {
                 response.set_content("pong", "text/plain");
               });
  });
}

// The body of each request is read as that request's, and refused: a request
// inside it would otherwise be answered as the connection's next, which
// lets a client hide a request from a proxy in front, and shifts every later
// answer on a connection the proxy shares by one. cpp-httplib leaves unread
// a chunked DELETE's body and any body of a method it does not read one for
// (GET, HEAD, OPTIONS, TRACE, CONNECT); an answer to a PRI before its body
// would too. PRI and DELETE have no route (404); the
// others take no body here (400).
TEST(HttpServerTest, UnreadBodiesAreNotTakenForTheNextRequest) {
  absl::StatusOr<std::unique_ptr<HttpServer>> server = StartPingServer();
  ASSERT_TRUE(server.ok()) << server.status();
  const std::vector<UnreadBodyCase> cases = {
      {"PRI", kChunked, kChunkedSmuggledPing, "HTTP/1.1 404"},
      {"DELETE", kChunked, kChunkedSmuggledPing, "HTTP/1.1 404"},
      {"GET", kChunked, kChunkedSmuggledPing, "HTTP/1.1 400"},
      {"GET", kLengthOfSmuggledPing, kSmuggledPing, "HTTP/1.1 400"},
      {"HEAD", kLengthOfSmuggledPing, kSmuggledPing, "HTTP/1.1 400"},
      {"OPTIONS", kLengthOfSmuggledPing, kSmuggledPing, "HTTP/1.1 400"},
      {"TRACE", kChunked, kChunkedSmuggledPing, "HTTP/1.1 400"},
      {"CONNECT", kLengthOfSmuggledPing, kSmuggledPing, "HTTP/1.1 400"},
  };
  for (const UnreadBodyCase& sent : cases) {
    const std::string label = absl::StrCat(sent.method, " with ", sent.framing);
    const int fd = local_cluster::ConnectToLoopback((*server)->port());
    ASSERT_GE(fd, 0);
    SendAll(fd,
            absl::StrCat(sent.method, " /ping HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                         sent.framing, "\r\n\r\n"));
    // The body apart, as a server that answered first would read it.
    absl::SleepFor(absl::Milliseconds(200));
    SendAll(fd, sent.body);
    EXPECT_TRUE(absl::StartsWith(ReceiveHead(fd), sent.status_line)) << label;
    SendAll(fd,
            "GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Connection: close\r\n\r\n");
    const std::string received = ReceiveUntilClosed(fd, 10);
    ::close(fd);
    EXPECT_TRUE(absl::StartsWith(received, "HTTP/1.1 200")) << label;
    const std::vector<absl::string_view> answers =
        absl::StrSplit(received, "HTTP/1.1 ", absl::SkipEmpty());
    EXPECT_EQ(answers.size(), 1U) << label << ": " << received;
  }
}

// An empty body is no body: a GET with Content-Length: 0, as some clients
// send, is answered as one without.
TEST(HttpServerTest, AnEmptyBodyOnAGetIsServed) {
  absl::StatusOr<std::unique_ptr<HttpServer>> server = StartPingServer();
  ASSERT_TRUE(server.ok()) << server.status();
  const int fd = local_cluster::ConnectToLoopback((*server)->port());
  ASSERT_GE(fd, 0);
  SendAll(fd,
          "GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
          "Connection: close\r\n\r\n");
  const std::string received = ReceiveUntilClosed(fd, 10);
  ::close(fd);
  EXPECT_TRUE(absl::StartsWith(received, "HTTP/1.1 200")) << received;
  EXPECT_TRUE(absl::EndsWith(received, "pong")) << received;
}

// A route that answers with the keepalive settings of its own connection:
// SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL and TCP_KEEPCNT.
void AddKeepaliveRoute(httplib::Server& routes) {
  routes.Get("/keepalive", [](const httplib::Request& request,
                              httplib::Response& response) {
    const std::optional<int> socket = FindPeerSocket(
        request.remote_addr, request.remote_port, request.local_port);
    std::string settings = "no socket";
    if (socket.has_value()) {
      settings.clear();
      const std::pair<int, int> options[] = {{SOL_SOCKET, SO_KEEPALIVE},
                                             {IPPROTO_TCP, TCP_KEEPIDLE},
                                             {IPPROTO_TCP, TCP_KEEPINTVL},
                                             {IPPROTO_TCP, TCP_KEEPCNT}};
      for (const auto& [level, option] : options) {
        int value = -1;
        socklen_t length = sizeof(value);
        getsockopt(*socket, level, option, &value, &length);
        absl::StrAppend(&settings, settings.empty() ? "" : " ", value);
      }
    }
    response.set_content(settings, "text/plain");
  });
}

// The accepted connections carry the keepalive given to the listener: the
// idle time, and the timeout spread over three probes, in whole seconds
// rounded up; a server given none leaves TCP keepalive off.
TEST(HttpServerTest, ConnectionsGetTheKeepaliveGivenInWholeSeconds) {
  absl::StatusOr<std::unique_ptr<HttpServer>> probing = HttpServer::Start(
      "127.0.0.1", 0, 2, AddKeepaliveRoute, nullptr,
      TcpKeepalive{.idle = absl::Seconds(6.5), .timeout = absl::Seconds(4)});
  ASSERT_TRUE(probing.ok()) << probing.status();
  absl::StatusOr<std::string> settings =
      local_cluster::HttpGet((*probing)->port(), "/keepalive");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(*settings, "1 7 2 3");

  absl::StatusOr<std::unique_ptr<HttpServer>> plain =
      HttpServer::Start("127.0.0.1", 0, 2, AddKeepaliveRoute);
  ASSERT_TRUE(plain.ok()) << plain.status();
  settings = local_cluster::HttpGet((*plain)->port(), "/keepalive");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_TRUE(absl::StartsWith(*settings, "0 ")) << *settings;
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
