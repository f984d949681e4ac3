// The OpenAI-compatible HTTP API of a real group: the same images as gRPC,
// OpenAI's error bodies, health and model lists, and a client that hangs up
// cancelling its run.

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/local_cluster/queue_depth.h"
#include "tools/local_cluster/rank_launcher.h"
#include "tools/local_cluster/server_sent_events.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::testing {
namespace {

using ::ditserve::local_cluster::ContextWithDeadline;
using ::ditserve::local_cluster::MetricValue;
using ::ditserve::local_cluster::ParseServerSentEvents;
using ::ditserve::local_cluster::RankExit;
using ::ditserve::local_cluster::ServingCluster;
using ::ditserve::local_cluster::SmallRequest;
using ::ditserve::local_cluster::StartUpFailure;
using ::ditserve::local_cluster::WaitForQueueDepth;
using ::testing::HasSubstr;

constexpr char kJson[] = "application/json";

class HttpApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::unique_ptr<ServingCluster>> started =
        ServingCluster::Start({.world_size = 1});
    ASSERT_TRUE(started.ok()) << started.status();
    cluster_ = started->release();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(cluster_, nullptr) << "the group did not start (see above)";
  }

  static std::unique_ptr<httplib::Client> Client(int read_timeout_s = 120) {
    auto client =
        std::make_unique<httplib::Client>("127.0.0.1", cluster_->http_port());
    client->set_read_timeout(read_timeout_s, 0);
    return client;
  }

  static double Requests(const std::string& status) {
    absl::StatusOr<std::string> metrics = cluster_->ScrapeMetrics();
    EXPECT_TRUE(metrics.ok()) << metrics.status();
    return MetricValue(metrics.value_or(""), "ditserve_requests_total",
                       {absl::StrCat("status=\"", status, "\"")});
  }

  static double UndeliveredStreams(const std::string& reason) {
    absl::StatusOr<std::string> metrics = cluster_->ScrapeMetrics();
    EXPECT_TRUE(metrics.ok()) << metrics.status();
    return MetricValue(metrics.value_or(""),
                       "ditserve_undelivered_streams_total",
                       {absl::StrCat("reason=\"", reason, "\"")});
  }

  // Waits up to a minute for ditserve_requests_total{status="cancelled"}.
  static void ExpectCancelledCountToReach(double count) {
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (Requests("cancelled") < count &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(Requests("cancelled"), count);
  }

  static ServingCluster* cluster_;
};
ServingCluster* HttpApiTest::cluster_ = nullptr;

// Writes `request` as is to 127.0.0.1:`port` and reads the response's head
// and the body its Content-Length gives.
absl::StatusOr<std::string> SendRawHttp(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket() failed");
  absl::Cleanup close_fd = [fd] { ::close(fd); };
  const timeval read_timeout{.tv_sec = 30, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &read_timeout,
               sizeof(read_timeout));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0 ||
      ::send(fd, request.data(), request.size(), 0) !=
          static_cast<ssize_t>(request.size())) {
    return absl::UnavailableError(absl::StrCat("cannot send to port ", port));
  }
  std::string response;
  char buffer[4096];
  for (;;) {
    const size_t head_end = response.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      const std::string marker = "Content-Length: ";
      const size_t at = response.find(marker);
      if (at != std::string::npos && at < head_end &&
          response.size() >=
              head_end + 4 + std::stoul(response.substr(at + marker.size())))
        return response;
    }
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) {
      return absl::DeadlineExceededError(
          absl::StrCat("the response ended or stalled after: ", response));
    }
    response.append(buffer, n);
  }
}

// SmallRequest's fields as an Images API body.
nlohmann::json SmallBody(int n) {
  return {{"model", "flux-dev"},
          {"prompt", "a lighthouse at dusk"},
          {"n", n},
          {"size", "48x64"},
          {"response_format", "b64_json"},
          {"num_inference_steps", 2},
          {"seed", 7},
          {"max_sequence_length", 32}};
}

// A 200-step 1024² run takes minutes (see serving_test.cc's LongRequest).
nlohmann::json LongBody() {
  nlohmann::json body = SmallBody(1);
  body["size"] = "1024x1024";
  body["num_inference_steps"] = 200;
  return body;
}

TEST_F(HttpApiTest, ImagesAreTheSameBytesAsOverGrpc) {
  const httplib::Result result =
      Client()->Post("/v1/images/generations", SmallBody(2).dump(), kJson);
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  ASSERT_EQ(result->status, 200) << result->body;
  const nlohmann::json body = nlohmann::json::parse(result->body);

  v1::GenerateRequest request = SmallRequest("a lighthouse at dusk");
  request.add_prompt("a lighthouse at dusk");
  v1::GenerateResponse expected;
  auto context = ContextWithDeadline(120);
  const grpc::Status status =
      cluster_->generation().Generate(context.get(), request, &expected);
  ASSERT_TRUE(status.ok()) << status.error_message();

  ASSERT_EQ(body["data"].size(), 2U);
  for (int i = 0; i < 2; ++i) {
    std::string png;
    ASSERT_TRUE(absl::Base64Unescape(
        body["data"][i]["b64_json"].get<std::string>(), &png));
    EXPECT_EQ(png, expected.images(i).data()) << "image " << i;
  }
  EXPECT_EQ(body["size"], "48x64");
  EXPECT_EQ(body["seed"], "7");
  EXPECT_EQ(body["output_format"], "png");
}

TEST_F(HttpApiTest, TheRequestIdComesFromTheBodyElseTheHeaderAndReturns) {
  const httplib::Headers traced = {{"X-Request-Id", "trace-5f3a"}};
  const httplib::Result from_header = Client()->Post(
      "/v1/images/generations", traced, SmallBody(1).dump(), kJson);
  ASSERT_TRUE(from_header);
  ASSERT_EQ(from_header->status, 200) << from_header->body;
  EXPECT_EQ(nlohmann::json::parse(from_header->body)["request_id"],
            "trace-5f3a");
  EXPECT_EQ(from_header->get_header_value("X-Request-Id"), "trace-5f3a");

  nlohmann::json named = SmallBody(1);
  named["request_id"] = "from-body";
  const httplib::Result from_body =
      Client()->Post("/v1/images/generations", traced, named.dump(), kJson);
  ASSERT_TRUE(from_body);
  EXPECT_EQ(from_body->get_header_value("X-Request-Id"), "from-body");

  const httplib::Result generated =
      Client()->Post("/v1/images/generations", SmallBody(1).dump(), kJson);
  ASSERT_TRUE(generated);
  EXPECT_EQ(generated->get_header_value("X-Request-Id"),
            nlohmann::json::parse(generated->body)["request_id"]);
  EXPECT_THAT(generated->get_header_value("X-Request-Id"), HasSubstr("req-"));
}

TEST_F(HttpApiTest, BadBodiesGetOpenAiErrorsAndAreCounted) {
  const double refused_before = Requests("invalid_argument");
  nlohmann::json bad_size = SmallBody(1);
  bad_size["size"] = "50x64";
  const httplib::Result refused =
      Client()->Post("/v1/images/generations", bad_size.dump(), kJson);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400);
  const nlohmann::json error = nlohmann::json::parse(refused->body)["error"];
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("width 50"));
  EXPECT_EQ(error["code"], "invalid_argument");
  // The server's own check of the size, which the OpenAI "size" holds.
  EXPECT_EQ(error["param"], "size");

  nlohmann::json too_many = SmallBody(9);
  const httplib::Result n_refused =
      Client()->Post("/v1/images/generations", too_many.dump(), kJson);
  ASSERT_TRUE(n_refused);
  EXPECT_EQ(n_refused->status, 400);
  EXPECT_EQ(nlohmann::json::parse(n_refused->body)["error"]["param"], "n");
  EXPECT_EQ(Requests("invalid_argument"), refused_before + 2);

  nlohmann::json other_model = SmallBody(1);
  other_model["model"] = "dall-e-3";
  const httplib::Result not_found =
      Client()->Post("/v1/images/generations", other_model.dump(), kJson);
  ASSERT_TRUE(not_found);
  EXPECT_EQ(not_found->status, 404);
  EXPECT_THAT(not_found->body, HasSubstr("flux-dev"));
  EXPECT_EQ(nlohmann::json::parse(not_found->body)["error"]["param"], "model");

  const httplib::Result no_route = Client()->Get("/v1/images/edits");
  ASSERT_TRUE(no_route);
  EXPECT_EQ(no_route->status, 404);
  EXPECT_THAT(no_route->body, HasSubstr("POST /v1/images/generations"));

  const httplib::Result served =
      Client()->Post("/v1/images/generations", SmallBody(1).dump(), kJson);
  ASSERT_TRUE(served);
  EXPECT_EQ(served->status, 200) << "the server goes on serving";
}

TEST_F(HttpApiTest, HealthAndModels) {
  const httplib::Result health = Client()->Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(nlohmann::json::parse(health->body)["status"], "serving");

  const httplib::Result models = Client()->Get("/v1/models");
  ASSERT_TRUE(models);
  const nlohmann::json list = nlohmann::json::parse(models->body);
  EXPECT_EQ(list["object"], "list");
  ASSERT_EQ(list["data"].size(), 1U);
  EXPECT_EQ(list["data"][0]["id"], "flux-dev");

  const httplib::Result model = Client()->Get("/v1/models/flux-dev");
  ASSERT_TRUE(model);
  EXPECT_EQ(model->status, 200);
  const httplib::Result other = Client()->Get("/v1/models/sd3-medium");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
  EXPECT_EQ(nlohmann::json::parse(other->body)["error"]["param"], "model");
}

// A chunked body of `bytes` spaces, sent 64 KiB at a time.
httplib::ContentProviderWithoutLength Spaces(size_t bytes) {
  return [bytes, sent = size_t{0}](size_t, httplib::DataSink& sink) mutable {
    const std::string piece(size_t{64} << 10, ' ');
    sent += piece.size();
    if (!sink.write(piece.data(), piece.size())) return false;
    if (sent >= bytes) sink.done();
    return true;
  };
}

// What a request that reaches no handler is told, and that refused
// generations count as refused requests.
TEST_F(HttpApiTest, RequestsNoHandlerTakesAreToldWhy) {
  const double refused_before = Requests("invalid_argument");
  const httplib::Result put =
      Client()->Put("/v1/images/generations", SmallBody(1).dump(), kJson);
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 405);
  EXPECT_EQ(put->get_header_value("Allow"), "POST");
  EXPECT_EQ(nlohmann::json::parse(put->body)["error"]["message"],
            "PUT is not allowed on /v1/images/generations; it takes POST");
  // The Allow header of a GET route names HEAD, and HEAD is served there.
  const httplib::Result post_models = Client()->Post("/v1/models", "{}", kJson);
  ASSERT_TRUE(post_models);
  EXPECT_EQ(post_models->status, 405);
  EXPECT_EQ(post_models->get_header_value("Allow"), "GET, HEAD");
  const httplib::Result head_models = Client()->Head("/v1/models");
  ASSERT_TRUE(head_models);
  EXPECT_EQ(head_models->status, 200);
  EXPECT_TRUE(head_models->body.empty());

  const httplib::Result too_large = Client()->Post(
      "/v1/images/generations", std::string(size_t{2} << 20, ' '), kJson);
  ASSERT_TRUE(too_large);
  EXPECT_EQ(too_large->status, 413);
  EXPECT_THAT(nlohmann::json::parse(too_large->body)["error"]["message"]
                  .get<std::string>(),
              HasSubstr("has 2097152 bytes; this API takes at most 1048576"));
  // Chunked, the body has no length to refuse it by: 4 MiB are read, 1 MiB
  // kept, and the same connection serves its next request.
  const std::unique_ptr<httplib::Client> keep_alive = Client();
  keep_alive->set_keep_alive(true);
  constexpr size_t kChunkedBytes = size_t{4} << 20;
  const httplib::Result chunked =
      keep_alive->Post("/v1/images/generations", Spaces(kChunkedBytes), kJson);
  ASSERT_TRUE(chunked);
  EXPECT_EQ(chunked->status, 413);
  EXPECT_THAT(
      nlohmann::json::parse(chunked->body)["error"]["message"]
          .get<std::string>(),
      HasSubstr("(sent without a Content-Length) is longer; this API takes "
                "at most 1048576 bytes"));
  const httplib::Result after_chunked = keep_alive->Get("/v1/models");
  ASSERT_TRUE(after_chunked);
  EXPECT_EQ(after_chunked->status, 200);
  const httplib::Result multipart =
      keep_alive->Post("/v1/images/generations",
                       httplib::MultipartFormDataItems{
                           {"body", R"({"prompt": "a fox"})", "", kJson}});
  ASSERT_TRUE(multipart);
  EXPECT_EQ(multipart->status, 415);
  EXPECT_THAT(nlohmann::json::parse(multipart->body)["error"]["message"]
                  .get<std::string>(),
              HasSubstr("takes a JSON body (Content-Type: application/json), "
                        "not multipart/form-data"));

  // As `curl -X POST URL` sends it; the server gives up reading after its
  // 5 s I/O timeout.
  absl::StatusOr<std::string> unframed =
      SendRawHttp(cluster_->http_port(),
                  "POST /v1/images/generations HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  "Content-Type: application/json\r\n\r\n");
  ASSERT_TRUE(unframed.ok()) << unframed.status();
  EXPECT_THAT(*unframed, HasSubstr("HTTP/1.1 411"));
  EXPECT_THAT(*unframed, HasSubstr("came without a Content-Length header"));
  // PRI, for which cpp-httplib has no route type, has its body drained (it
  // would be held whole) and is told what the path takes.
  absl::StatusOr<std::string> pri =
      SendRawHttp(cluster_->http_port(),
                  "PRI /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  ASSERT_TRUE(pri.ok()) << pri.status();
  EXPECT_THAT(*pri, HasSubstr("HTTP/1.1 405"));
  EXPECT_THAT(*pri, HasSubstr("PRI is not allowed on /v1/models; it takes "
                              "GET, HEAD"));
  // A GET's body is drained and refused, naming how it was framed, rather
  // than read as the connection's next request (HttpServerTest has the
  // connection's later answers).
  const std::string inner_post =
      "POST /v1/images/generations HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
  absl::StatusOr<std::string> get_with_body =
      SendRawHttp(cluster_->http_port(),
                  absl::StrCat("GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                               "Content-Length: ",
                               inner_post.size(), "\r\n\r\n", inner_post));
  ASSERT_TRUE(get_with_body.ok()) << get_with_body.status();
  EXPECT_THAT(*get_with_body, HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(
      *get_with_body,
      HasSubstr(absl::StrCat("GET /v1/models came with a body "
                             "(Content-Length: ",
                             inner_post.size(), "); GET takes none here")));
  // The two bodies over 1 MiB, the multipart one and the unframed one.
  EXPECT_EQ(Requests("invalid_argument"), refused_before + 4);
}

// Headers cpp-httplib acts on by itself, and bodies it would hold whole or
// parse without bound, do not get past the API's limits: each request is
// answered as a whole JSON body, and the connection serves the next one.
TEST_F(HttpApiTest, HeadersAndBodiesCannotSteerTheHttpLibrary) {
  const double refused_before = Requests("invalid_argument");
  std::unique_ptr<httplib::Client> client = Client();
  client->set_keep_alive(true);
  client->set_decompress(false);
  // A Range would have cut the answer to a POST into pieces (206), one copy
  // of the body per range; Accept-Encoding would have had it brotli'd.
  const httplib::Result ranged = client->Post(
      "/v1/images/generations",
      {{"Range", "bytes=0-9,0-9,0-"}, {"Accept-Encoding", "br, gzip"}},
      R"({"prompt": "a fox", "mask": "x"})", kJson);
  ASSERT_TRUE(ranged);
  EXPECT_EQ(ranged->status, 400);
  EXPECT_FALSE(ranged->has_header("Content-Range"));
  EXPECT_FALSE(ranged->has_header("Content-Encoding"));
  ASSERT_TRUE(nlohmann::json::accept(ranged->body)) << ranged->body;
  EXPECT_EQ(nlohmann::json::parse(ranged->body)["error"]["param"], "mask");
  const httplib::Result listed = client->Get(
      "/v1/models", {{"Range", "bytes=0-3"}, {"Accept-Encoding", "br"}});
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->status, 200);
  EXPECT_FALSE(listed->has_header("Content-Encoding"));
  EXPECT_EQ(nlohmann::json::parse(listed->body)["object"], "list");
  // One cpp-httplib cannot parse is answered 416 before any route, with the
  // ranges it did parse: still whole.
  const httplib::Result unparsable =
      client->Get("/v1/models", {{"Range", "bytes=0-,0-,2-1"}});
  ASSERT_TRUE(unparsable);
  EXPECT_EQ(unparsable->status, 416);
  ASSERT_TRUE(nlohmann::json::accept(unparsable->body)) << unparsable->body;
  EXPECT_THAT(nlohmann::json::parse(unparsable->body)["error"]["message"]
                  .get<std::string>(),
              HasSubstr("GET /v1/models: its Range header could not be read"));

  // A body for a path no route takes is drained under the body limit and
  // told the routes, whatever its length (a Content-Length over the limit
  // too).
  const httplib::Result unrouted =
      client->Post("/v1/images/edits", Spaces(size_t{4} << 20), kJson);
  ASSERT_TRUE(unrouted);
  EXPECT_EQ(unrouted->status, 404);
  EXPECT_THAT(nlohmann::json::parse(unrouted->body)["error"]["message"]
                  .get<std::string>(),
              HasSubstr("no route POST /v1/images/edits"));
  const httplib::Result long_unrouted = client->Patch(
      "/v1/images/generations", std::string(size_t{2} << 20, ' '), kJson);
  ASSERT_TRUE(long_unrouted);
  EXPECT_EQ(long_unrouted->status, 405);
  EXPECT_EQ(long_unrouted->get_header_value("Allow"), "POST");

  // cpp-httplib's multipart parser kept what followed a part's end; read as
  // plain bytes, the body is refused for what it is.
  const httplib::Result multipart = client->Post(
      "/v1/images/generations",
      [sent = false](size_t, httplib::DataSink& sink) mutable {
        if (!sent) {
          const std::string head = "--B\r\n\r\n\r\nx\r\n--B";
          sink.write(head.data(), head.size());
          sent = true;
          return true;
        }
        const std::string tail(size_t{2} << 20, 'y');
        sink.write(tail.data(), tail.size());
        sink.done();
        return true;
      },
      "multipart/form-data; boundary=B");
  ASSERT_TRUE(multipart);
  EXPECT_EQ(multipart->status, 413);
  // A page on another origin can post text/plain without a preflight.
  const httplib::Result text =
      client->Post("/v1/images/generations", SmallBody(1).dump(), "text/plain");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->status, 415);
  EXPECT_THAT(
      nlohmann::json::parse(text->body)["error"]["message"].get<std::string>(),
      HasSubstr("takes a JSON body (Content-Type: application/json), not "
                "text/plain"));

  const httplib::Result after = client->Get("/v1/models");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
  // The three refused generations.
  EXPECT_EQ(Requests("invalid_argument"), refused_before + 3);
}

// The host logs a line per request, as web servers do, but for successful
// health checks (probes would fill the log).
TEST_F(HttpApiTest, EachRequestIsAnAccessLogLine) {
  ASSERT_TRUE(Client()->Get("/v1/models"));
  EXPECT_TRUE(cluster_->ranks().WaitForOutput(0, "\"GET /v1/models\" 200 ",
                                              std::chrono::seconds(5)));
  // Client bytes stay on their line.
  ASSERT_TRUE(Client()->Get("/v1/nothing%0Ahere"));
  EXPECT_TRUE(cluster_->ranks().WaitForOutput(
      0, R"("GET /v1/nothing\nhere" 404 )", std::chrono::seconds(5)));
  // The size logged is the body as sent, compressed where the client takes
  // gzip (cpp-httplib 0.18's client asks for it unbidden); this client keeps
  // the body as it came.
  std::unique_ptr<httplib::Client> as_sent = Client();
  as_sent->set_decompress(false);
  const httplib::Result generated =
      as_sent->Post("/v1/images/generations",
                    {{"X-Request-Id", "access-1"}, {"Accept-Encoding", "gzip"}},
                    SmallBody(1).dump(), kJson);
  ASSERT_TRUE(generated);
  EXPECT_EQ(generated->status, 200);
  EXPECT_TRUE(cluster_->ranks().WaitForOutput(
      0,
      absl::StrCat("\"POST /v1/images/generations\" 200 ",
                   generated->body.size(), " bytes in "),
      std::chrono::seconds(5)));
  EXPECT_TRUE(cluster_->ranks().WaitForOutput(0, " request_id=access-1",
                                              std::chrono::seconds(5)));
  ASSERT_TRUE(Client()->Get("/health"));
  ASSERT_TRUE(Client()->Get("/v1/models/flux-dev"));
  EXPECT_TRUE(cluster_->ranks().WaitForOutput(
      0, "\"GET /v1/models/flux-dev\" 200 ", std::chrono::seconds(5)));
  EXPECT_THAT(cluster_->ranks().Output(0),
              ::testing::Not(HasSubstr("\"GET /health\"")));
}

// cpp-httplib gives each open connection a handler thread, an idle one too
// until its 5 s keep-alive timeout, and queues what comes after: with only a
// few threads beyond the queue's (24 here), clients' connection pools held
// them all and /health waited seconds for a thread.
TEST_F(HttpApiTest, IdleConnectionsLeaveHealthAnswered) {
  std::vector<int> idle;
  for (int i = 0; i < 48; ++i) {
    idle.push_back(local_cluster::ConnectToLoopback(cluster_->http_port()));
    ASSERT_GE(idle.back(), 0);
  }
  const httplib::Result health = Client(/*read_timeout_s=*/2)->Get("/health");
  for (int fd : idle) ::close(fd);
  ASSERT_TRUE(health) << httplib::to_string(health.error());
  EXPECT_EQ(health->status, 200);
}

// Paths are client bytes, which need not be UTF-8; JSON bodies must be.
TEST_F(HttpApiTest, PathsThatAreNotUtf8AreRefusedAndServingGoesOn) {
  for (const std::string path : {"/%FF%FE", "/v1/models/%FFx"}) {
    const httplib::Result refused = Client()->Get(path);
    ASSERT_TRUE(refused) << path;
    EXPECT_EQ(refused->status, 404) << path << ": " << refused->body;
    EXPECT_TRUE(nlohmann::json::accept(refused->body)) << refused->body;
  }
  const httplib::Result put = Client()->Put("/v1/models/%FF", "", kJson);
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 405);
  const httplib::Result health = Client()->Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

// The client gives up after 2 s and closes its connection.
TEST_F(HttpApiTest, ClientThatHangsUpCancelsItsRun) {
  const double cancelled_before = Requests("cancelled");
  nlohmann::json long_body = LongBody();
  const httplib::Result abandoned =
      Client(/*read_timeout_s=*/2)
          ->Post("/v1/images/generations", long_body.dump(), kJson);
  EXPECT_FALSE(abandoned) << "the run should outlast the client's timeout";

  ExpectCancelledCountToReach(cancelled_before + 1);
  const httplib::Result next =
      Client()->Post("/v1/images/generations", SmallBody(1).dump(), kJson);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200) << next->body;
}

// POSTs `body` and hands each chunk of the response body to `receive` as it
// comes; `receive` returning false drops the connection.
httplib::Result PostStreamed(
    httplib::Client& client, const nlohmann::json& body,
    std::function<bool(const std::string& chunk)> receive) {
  httplib::Request request;
  request.method = "POST";
  request.path = "/v1/images/generations";
  request.body = body.dump();
  request.set_header("Content-Type", kJson);
  request.content_receiver = [receive = std::move(receive)](
                                 const char* data, size_t length, uint64_t,
                                 uint64_t) {
    return receive(std::string(data, length));
  };
  return client.send(request);
}

TEST_F(HttpApiTest, StreamSendsEachStepThenEachImageAsOpenAiEvents) {
  nlohmann::json body = SmallBody(2);
  body["stream"] = true;
  std::string stream;
  auto client = Client();
  const httplib::Result streamed =
      PostStreamed(*client, body, [&stream](const std::string& chunk) {
        stream += chunk;
        return true;
      });
  ASSERT_TRUE(streamed);
  EXPECT_EQ(streamed->status, 200);
  EXPECT_EQ(streamed->get_header_value("Content-Type"), "text/event-stream");
  const std::vector<std::pair<std::string, nlohmann::json>> events =
      ParseServerSentEvents(stream);
  ASSERT_EQ(events.size(), 4U) << stream;
  for (int step = 1; step <= 2; ++step) {
    EXPECT_EQ(events[step - 1].first, "ditserve.progress");
    EXPECT_EQ(events[step - 1].second["step"], step);
    EXPECT_EQ(events[step - 1].second["total_steps"], 2);
  }
  // The same images as the same body answered at once.
  const httplib::Result whole =
      client->Post("/v1/images/generations", SmallBody(2).dump(), kJson);
  ASSERT_TRUE(whole);
  const nlohmann::json expected = nlohmann::json::parse(whole->body);
  for (int i = 0; i < 2; ++i) {
    const nlohmann::json& completed = events[2 + i].second;
    EXPECT_EQ(events[2 + i].first, "image_generation.completed");
    EXPECT_EQ(completed["type"], "image_generation.completed");
    EXPECT_EQ(completed["index"], i);
    EXPECT_EQ(completed["size"], "48x64");
    EXPECT_EQ(completed["seed"], absl::StrCat(7 + i));
    EXPECT_EQ(completed["request_id"],
              streamed->get_header_value("X-Request-Id"));
    EXPECT_EQ(completed["b64_json"], expected["data"][i]["b64_json"]) << i;
  }
}

TEST_F(HttpApiTest, AStreamThatIsDroppedCancelsItsRun) {
  const double cancelled_before = Requests("cancelled");
  nlohmann::json long_body = LongBody();
  long_body["stream"] = true;
  std::string seen;
  auto client = Client();
  const httplib::Result dropped =
      PostStreamed(*client, long_body, [&seen](const std::string& chunk) {
        seen += chunk;
        return seen.find("ditserve.progress") == std::string::npos;
      });
  EXPECT_THAT(seen, HasSubstr("\"step\":1")) << "dropped after one step";

  ExpectCancelledCountToReach(cancelled_before + 1);
}

// A client that stops reading before its images arrive: with a 4 KiB
// receive buffer, the host's write of two 1024² images (about 8 MB of
// base64, past what the sockets buffer) gives up after the 5 s write
// timeout. The run was counted ok when answered; the stream is counted as
// undelivered too, as a gRPC stream is.
TEST_F(HttpApiTest, AStreamWhoseClientStopsReadingIsCountedUndelivered) {
  const double ok_before = Requests("ok");
  const double timed_out_before = UndeliveredStreams("write_timeout");
  const double gone_before = UndeliveredStreams("client_gone");
  nlohmann::json body = SmallBody(2);
  body["size"] = "1024x1024";
  body["num_inference_steps"] = 1;
  body["stream"] = true;
  httplib::Client client("127.0.0.1", cluster_->http_port());
  client.set_read_timeout(120, 0);
  // Else the kernel grows its buffer to hold the images.
  client.set_socket_options([](socket_t socket) {
    const int bytes = 4096;
    setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
  });
  bool counted = false;
  PostStreamed(client, body, [&](const std::string&) {
    // Reads nothing more until the host has given up on the stream.
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!counted && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      counted = UndeliveredStreams("write_timeout") > timed_out_before;
    }
    return false;
  });
  EXPECT_TRUE(counted);
  EXPECT_EQ(Requests("ok"), ok_before + 1);
  EXPECT_EQ(UndeliveredStreams("write_timeout"), timed_out_before + 1);
  EXPECT_EQ(UndeliveredStreams("client_gone"), gone_before);
}

// SIGTERM drains the running stream's job, and the stream still ends with
// its image: stopping the HTTP server ends a stream between two writes, so
// the host waits for open streams first. Here the client, with a 4 KiB
// receive buffer, stops reading at the first step until the host waits for
// it, so the stream is still writing the preview (about 4 MB of base64,
// past what the sockets buffer) when the drain ends.
TEST(HttpApiDrainTest, SigtermLetsAStreamSendItsLastEvents) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  nlohmann::json body = SmallBody(1);
  body["size"] = "1024x1024";
  body["num_inference_steps"] = 2;
  body["partial_images"] = 1;
  body["stream"] = true;
  httplib::Client client("127.0.0.1", (*cluster)->http_port());
  client.set_read_timeout(120, 0);
  // Else the kernel grows its buffer to hold the whole preview.
  client.set_socket_options([](socket_t socket) {
    const int bytes = 4096;
    setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
  });
  std::string stream;
  bool host_waited = false;
  const httplib::Result streamed =
      PostStreamed(client, body, [&](const std::string& chunk) {
        if (stream.empty()) {
          (*cluster)->Terminate();
          host_waited = (*cluster)->ranks().WaitForOutput(
              0, "open event streams to end", std::chrono::seconds(20));
        }
        stream += chunk;
        return true;
      });
  ASSERT_TRUE(streamed) << httplib::to_string(streamed.error());
  EXPECT_TRUE(host_waited) << (*cluster)->ranks().Output(0);
  EXPECT_THAT(stream, HasSubstr("event: image_generation.partial_image"));
  EXPECT_THAT(stream, HasSubstr("event: image_generation.completed"))
      << "the stream ended after " << stream.size() << " bytes";
  for (const RankExit& exit :
       (*cluster)->ranks().WaitAll(std::chrono::seconds(60))) {
    EXPECT_EQ(exit.exit_code, 0) << (*cluster)->ranks().Output(exit.rank);
  }
}

// A stream refused at admission is answered as any refused request is: its
// HTTP status and OpenAI's error body, not an event stream.
TEST(HttpApiQueueTest, AStreamRefusedAtAdmissionIsA429WithAnErrorBody) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1, .host_flags = {"--max_queue=1"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const int port = (*cluster)->http_port();
  // One stream holds the group until the refusal is seen, then drops.
  absl::Notification running;
  std::atomic<bool> release = false;
  std::thread holder([&] {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(120, 0);
    nlohmann::json body = LongBody();
    body["stream"] = true;
    PostStreamed(client, body, [&](const std::string&) {
      if (!running.HasBeenNotified()) running.Notify();
      return !release.load();
    });
  });
  ASSERT_TRUE(running.WaitForNotificationWithTimeout(absl::Seconds(120)));
  int queued_status = 0;
  std::thread queued([&] {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(120, 0);
    const httplib::Result result =
        client.Post("/v1/images/generations", SmallBody(1).dump(), kJson);
    queued_status = result ? result->status : -1;
  });
  EXPECT_TRUE(WaitForQueueDepth(**cluster, 1, std::chrono::seconds(30)));

  nlohmann::json body = SmallBody(1);
  body["stream"] = true;
  const httplib::Result refused =
      httplib::Client("127.0.0.1", port)
          .Post("/v1/images/generations", body.dump(), kJson);
  release = true;
  holder.join();
  queued.join();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 429);
  EXPECT_EQ(refused->get_header_value("Content-Type"), kJson);
  EXPECT_EQ(refused->get_header_value("Retry-After"), "1");
  EXPECT_THAT(nlohmann::json::parse(refused->body)["error"]["message"]
                  .get<std::string>(),
              HasSubstr("queue is full"));
  EXPECT_EQ(queued_status, 200) << "the request that waited still ran";
}

// A request above --max_request_bytes gets the same refusal however often
// it is sent, so HTTP clients are told not to retry it: no Retry-After, and
// the header the OpenAI SDKs obey instead of retrying every 429.
TEST(HttpApiQueueTest, ARequestAboveTheMemoryLimitIsToldNotToRetry) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1, .host_flags = {"--max_request_bytes=268435456"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  nlohmann::json body = SmallBody(1);
  body["size"] = "1024x1024";
  const httplib::Result refused =
      httplib::Client("127.0.0.1", (*cluster)->http_port())
          .Post("/v1/images/generations", body.dump(), kJson);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 429);
  EXPECT_EQ(refused->get_header_value("x-should-retry"), "false");
  EXPECT_FALSE(refused->has_header("Retry-After"));
  EXPECT_THAT(nlohmann::json::parse(refused->body)["error"]["message"]
                  .get<std::string>(),
              HasSubstr("above --max_request_bytes 268435456"));
}

// Under --max_queued_per_client one client's flood of requests is refused
// past its share of the queue, while another client's request still gets
// in, and takes its turn ahead of the flood's second request: the clients
// are the names in the token file.
TEST(HttpApiQueueTest, AClientPastItsQueueShareIsRefusedAndOthersGetIn) {
  constexpr char kBatchToken[] = "batch-token-0123456789";
  constexpr char kWebToken[] = "web-token-0123456789";
  const std::string tokens = ::testing::TempDir() + "/ditserve-client-tokens-" +
                             std::to_string(::getpid());
  std::ofstream(tokens) << "batch " << kBatchToken << "\nweb-app " << kWebToken
                        << "\n";
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start({.world_size = 1,
                             .host_flags = {"--auth_token_file=" + tokens,
                                            "--max_queued_per_client=2"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  v1::ServerInfo info;
  auto info_context = ContextWithDeadline(30);
  info_context->AddMetadata("authorization",
                            absl::StrCat("Bearer ", kWebToken));
  const grpc::Status info_status =
      (*cluster)->generation().GetServerInfo(info_context.get(), {}, &info);
  ASSERT_TRUE(info_status.ok()) << info_status.error_message();
  EXPECT_EQ(info.limits().max_queued_per_client(), 2);
  // Before any request of a named client: its series are there at zero.
  absl::StatusOr<std::string> first_scrape = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(first_scrape.ok()) << first_scrape.status();
  for (const char* client : {"batch", "web-app"}) {
    EXPECT_THAT(*first_scrape,
                HasSubstr(absl::StrCat("ditserve_requests_total{client=\"",
                                       client, "\",model=\"", info.model(),
                                       "\",status=\"resource_exhausted\"} 0")))
        << client;
  }
  const int port = (*cluster)->http_port();
  const auto client_of = [port](const char* token) {
    auto client = std::make_unique<httplib::Client>("127.0.0.1", port);
    client->set_read_timeout(120, 0);
    client->set_bearer_token_auth(token);
    return client;
  };
  // The batch client's stream holds the group; it runs, so it is not
  // waiting and does not count.
  absl::Notification running;
  std::atomic<bool> release = false;
  std::thread holder([&] {
    nlohmann::json body = LongBody();
    body["stream"] = true;
    PostStreamed(*client_of(kBatchToken), body, [&](const std::string&) {
      if (!running.HasBeenNotified()) running.Notify();
      return !release.load();
    });
  });
  ASSERT_TRUE(running.WaitForNotificationWithTimeout(absl::Seconds(120)));
  const auto post_in_background = [&](const char* token, int* status) {
    return std::thread([&client_of, token, status] {
      const httplib::Result result = client_of(token)->Post(
          "/v1/images/generations", SmallBody(1).dump(), kJson);
      *status = result ? result->status : -1;
    });
  };
  int batch_status[2] = {0, 0};
  std::thread batch[2];
  for (int i = 0; i < 2; ++i) {
    batch[i] = post_in_background(kBatchToken, &batch_status[i]);
    EXPECT_TRUE(WaitForQueueDepth(**cluster, i + 1, std::chrono::seconds(30)));
  }

  const httplib::Result refused =
      client_of(kBatchToken)
          ->Post("/v1/images/generations", SmallBody(1).dump(), kJson);
  int web_queued = 0;
  std::thread web = post_in_background(kWebToken, &web_queued);
  EXPECT_TRUE(WaitForQueueDepth(**cluster, 3, std::chrono::seconds(30)))
      << "another client's request is admitted";
  release = true;
  holder.join();
  for (std::thread& queued : batch) queued.join();
  web.join();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 429);
  EXPECT_EQ(refused->get_header_value("Retry-After"), "1");
  EXPECT_EQ(nlohmann::json::parse(refused->body)["error"]["message"],
            "client batch has 2 waiting (--max_queued_per_client); retry "
            "when one has run");
  EXPECT_EQ(batch_status[0], 200);
  EXPECT_EQ(batch_status[1], 200);
  EXPECT_EQ(web_queued, 200);
  EXPECT_TRUE((*cluster)->ranks().WaitForOutput(
      0, "client=batch refused status=resource_exhausted: client batch has 2",
      std::chrono::seconds(5)));
  // Behind batch's first queued request, not behind both.
  EXPECT_TRUE((*cluster)->ranks().WaitForOutput(
      0, "client=web-app queued at position 1", std::chrono::seconds(5)));
  // The access log line of the refusal.
  EXPECT_TRUE((*cluster)->ranks().WaitForOutput(
      0,
      absl::StrCat("request_id=", refused->get_header_value("X-Request-Id"),
                   " client=batch"),
      std::chrono::seconds(5)));
  absl::StatusOr<std::string> metrics = (*cluster)->ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  const auto count = [&metrics](const char* client, const char* status) {
    return MetricValue(*metrics, "ditserve_requests_total",
                       {absl::StrCat("client=\"", client, "\""),
                        absl::StrCat("status=\"", status, "\"")});
  };
  EXPECT_EQ(count("batch", "resource_exhausted"), 1);
  EXPECT_EQ(count("batch", "ok"), 2) << "the queued requests";
  EXPECT_EQ(count("web-app", "ok"), 1);
  EXPECT_EQ(count("web-app", "resource_exhausted"), 0);
}

// A page of an allowed origin calls the API from a browser: the preflight
// a browser sends first, then the call, each answered with the CORS headers
// that let the page read the response; other origins get none.
TEST(HttpApiCorsTest, AnAllowedOriginsPreflightAndCallsGetCorsHeaders) {
  constexpr char kOrigin[] = "http://localhost:3000";
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 1,
           .host_flags = {absl::StrCat("--http_cors_origins=", kOrigin)}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  httplib::Client client("127.0.0.1", (*cluster)->http_port());
  client.set_read_timeout(120, 0);

  const httplib::Result preflight = client.Options(
      "/v1/images/generations",
      {{"Origin", kOrigin},
       {"Access-Control-Request-Method", "POST"},
       {"Access-Control-Request-Headers", "content-type,x-stainless-os"}});
  ASSERT_TRUE(preflight);
  EXPECT_EQ(preflight->status, 204);
  EXPECT_EQ(preflight->get_header_value("Access-Control-Allow-Origin"),
            kOrigin);
  EXPECT_EQ(preflight->get_header_value("Access-Control-Allow-Methods"),
            "POST");
  EXPECT_EQ(preflight->get_header_value("Access-Control-Allow-Headers"),
            "content-type,x-stainless-os");

  nlohmann::json body = SmallBody(1);
  body["stream"] = true;
  for (const bool stream : {false, true}) {
    body["stream"] = stream;
    const httplib::Result called = client.Post(
        "/v1/images/generations", {{"Origin", kOrigin}}, body.dump(), kJson);
    ASSERT_TRUE(called);
    EXPECT_EQ(called->status, 200) << called->body;
    EXPECT_EQ(called->get_header_value("Access-Control-Allow-Origin"), kOrigin)
        << "stream " << stream;
    EXPECT_THAT(called->get_header_value("Access-Control-Expose-Headers"),
                HasSubstr("X-Request-Id"));
  }
  const httplib::Result refused =
      client.Post("/v1/images/generations", {{"Origin", kOrigin}}, "{}", kJson);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400);
  EXPECT_EQ(refused->get_header_value("Access-Control-Allow-Origin"), kOrigin)
      << "the page reads the error too";

  const httplib::Result other =
      client.Get("/v1/models", {{"Origin", "http://evil.example"}});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 200);
  EXPECT_FALSE(other->has_header("Access-Control-Allow-Origin"));
  const httplib::Result other_preflight =
      client.Options("/v1/models", {{"Origin", "http://evil.example"},
                                    {"Access-Control-Request-Method", "GET"}});
  ASSERT_TRUE(other_preflight);
  EXPECT_EQ(other_preflight->status, 403);
  EXPECT_EQ(nlohmann::json::parse(other_preflight->body)["error"]["message"],
            "origin http://evil.example is not in --http_cors_origins");
}

TEST(HttpApiCorsTest, AnOriginThatIsNotOneFailsStartUp) {
  EXPECT_THAT(StartUpFailure(
                  {.world_size = 1,
                   .host_flags = {"--http_cors_origins=https://a.example/"}}),
              HasSubstr("--http_cors_origins entry \"https://a.example/\""));
}

// A run that fails after its stream began ends the stream with an "error"
// event carrying OpenAI's error body.
TEST(HttpApiStreamFailureTest, ALostRankEndsTheStreamWithAnErrorEvent) {
  absl::StatusOr<std::unique_ptr<ServingCluster>> cluster =
      ServingCluster::Start(
          {.world_size = 2,
           .rank_flags = {"--dp_degree=2", "--collective_timeout_s=10"}});
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  nlohmann::json body = LongBody();
  body["stream"] = true;
  std::string stream;
  bool killed = false;
  httplib::Client client("127.0.0.1", (*cluster)->http_port());
  client.set_read_timeout(120, 0);
  const httplib::Result streamed =
      PostStreamed(client, body, [&](const std::string& chunk) {
        stream += chunk;
        if (!killed && stream.find("ditserve.progress") != std::string::npos) {
          (*cluster)->ranks().Kill(1);
          killed = true;
        }
        return true;
      });
  ASSERT_TRUE(streamed);
  EXPECT_EQ(streamed->status, 200) << "the stream had begun";
  const std::vector<std::pair<std::string, nlohmann::json>> events =
      ParseServerSentEvents(stream);
  ASSERT_FALSE(events.empty());
  const auto& [type, data] = events.back();
  EXPECT_EQ(type, "error") << stream;
  EXPECT_THAT(data["error"]["code"].get<std::string>(),
              ::testing::AnyOf("unavailable", "internal"));
  EXPECT_THAT(data["error"]["message"].get<std::string>(), HasSubstr("rank 1"));
}

}  // namespace
}  // namespace ditserve::testing
