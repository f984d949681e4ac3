#include "server/http_refusal.h"

#include <httplib.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/http_request_rewrite.h"

namespace ditserve::server {
namespace {

using ::testing::HasSubstr;

constexpr size_t kMaxBody = 1 << 20;

const std::vector<HttpRoute>& TestRoutes() {
  static const auto* routes = new std::vector<HttpRoute>{
      {"POST", "/v1/images/generations", "POST /v1/images/generations"},
      {"GET", "/v1/models", "GET /v1/models"},
      {"GET", "/v1/models/([^/]+)", "GET /v1/models/{model}"},
      {"DELETE", "/v1/models/([^/]+)", "DELETE /v1/models/{model}"}};
  return *routes;
}

httplib::Request Request(const std::string& method, const std::string& path) {
  httplib::Request request;
  request.method = method;
  request.path = path;
  return request;
}

TEST(ExplainHttpRefusalTest, AnUnknownPathListsEveryRoute) {
  const HttpRefusal refusal = ExplainHttpRefusal(
      TestRoutes(), Request("GET", "/v1/images/edits"), 404, kMaxBody);
  EXPECT_EQ(refusal.http_status, 404);
  EXPECT_EQ(refusal.status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(refusal.status.message(),
            "no route GET /v1/images/edits; this server offers POST "
            "/v1/images/generations, GET /v1/models, GET /v1/models/{model}, "
            "DELETE /v1/models/{model}");
  EXPECT_EQ(refusal.allow, "");
}

TEST(ExplainHttpRefusalTest, AnUnreadableRangeIs416SayingToLeaveItOut) {
  const HttpRefusal refusal = ExplainHttpRefusal(
      TestRoutes(), Request("POST", "/v1/images/generations"), 416, kMaxBody);
  EXPECT_EQ(refusal.http_status, 416);
  EXPECT_EQ(refusal.status.message(),
            "POST /v1/images/generations: its Range header could not be read; "
            "this API ignores Range and sends whole answers, so leave it out");
}

// A path is the client's text, quoted cut like any other.
TEST(ExplainHttpRefusalTest, ALongPathIsQuotedCut) {
  const std::string path = absl::StrCat("/", std::string(8000, 'p'));
  const HttpRefusal refusal =
      ExplainHttpRefusal(TestRoutes(), Request("GET", path), 404, kMaxBody);
  EXPECT_THAT(refusal.status.message(),
              HasSubstr(absl::StrCat("no route GET /", std::string(63, 'p'),
                                     "...; this server offers")));
  EXPECT_LT(refusal.status.message().size(), 300U);
}

TEST(ExplainHttpRefusalTest, AKnownPathWithAnotherMethodIs405WithTheMethods) {
  const HttpRefusal put = ExplainHttpRefusal(
      TestRoutes(), Request("PUT", "/v1/images/generations"), 404, kMaxBody);
  EXPECT_EQ(put.http_status, 405);
  EXPECT_EQ(put.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(put.status.message(),
            "PUT is not allowed on /v1/images/generations; it takes POST");
  EXPECT_EQ(put.allow, "POST");

  // A pattern matches the whole path, not a prefix of it.
  const HttpRefusal post = ExplainHttpRefusal(
      TestRoutes(), Request("POST", "/v1/models/flux-dev"), 404, kMaxBody);
  EXPECT_EQ(post.http_status, 405);
  EXPECT_EQ(post.allow, "GET, HEAD, DELETE");
  EXPECT_EQ(post.status.message(),
            "POST is not allowed on /v1/models/flux-dev; it takes GET, HEAD, "
            "DELETE");
  EXPECT_EQ(ExplainHttpRefusal(TestRoutes(),
                               Request("GET", "/v1/models/flux-dev/files"), 404,
                               kMaxBody)
                .http_status,
            404);
}

TEST(ExplainHttpRefusalTest, ABodyOverTheLimitNamesItsLengthAndTheLimit) {
  httplib::Request request = Request("POST", "/v1/images/generations");
  request.set_header("Content-Length", "2000000");
  const HttpRefusal refusal =
      ExplainHttpRefusal(TestRoutes(), request, 413, kMaxBody);
  EXPECT_EQ(refusal.http_status, 413);
  EXPECT_EQ(refusal.status.message(),
            "the body of POST /v1/images/generations has 2000000 bytes; this "
            "API takes at most 1048576 bytes");

  httplib::Request chunked = Request("POST", "/v1/images/generations");
  chunked.set_header("Transfer-Encoding", "chunked");
  EXPECT_EQ(
      ExplainHttpRefusal(TestRoutes(), chunked, 413, kMaxBody).status.message(),
      "the body of POST /v1/images/generations (sent without a "
      "Content-Length) is longer; this API takes at most 1048576 bytes");

  httplib::Request gzipped = Request("POST", "/v1/images/generations");
  gzipped.set_header("Content-Length", "5000");
  gzipped.set_header("Content-Encoding", "gzip");
  EXPECT_EQ(
      ExplainHttpRefusal(TestRoutes(), gzipped, 413, kMaxBody).status.message(),
      "the body of POST /v1/images/generations (Content-Encoding: gzip) "
      "decompresses to more; this API takes at most 1048576 bytes");
}

// The Content-Type as sent, multipart's included, which the pre-routing
// handler hides from cpp-httplib's parser.
TEST(ExplainHttpRefusalTest, ABodyThatIsNotJsonIs415NamingItsContentType) {
  httplib::Request multipart = Request("POST", "/v1/images/generations");
  multipart.set_header("Content-Type", "multipart/form-data; boundary=b");
  RewriteRequestHeaders(multipart);
  const HttpRefusal refusal =
      ExplainHttpRefusal(TestRoutes(), multipart, 415, kMaxBody);
  EXPECT_EQ(refusal.http_status, 415);
  EXPECT_EQ(refusal.status.message(),
            "POST /v1/images/generations takes a JSON body (Content-Type: "
            "application/json), not multipart/form-data; boundary=b");
  httplib::Request text = Request("POST", "/v1/images/generations");
  text.set_header("Content-Type", "text/plain;charset=UTF-8");
  EXPECT_THAT(
      ExplainHttpRefusal(TestRoutes(), text, 415, kMaxBody).status.message(),
      HasSubstr("not text/plain;charset=UTF-8"));
  EXPECT_THAT(ExplainHttpRefusal(TestRoutes(),
                                 Request("POST", "/v1/images/generations"), 415,
                                 kMaxBody)
                  .status.message(),
              HasSubstr("not a body without a Content-Type"));
}

TEST(ExplainHttpRefusalTest, APostWithoutLengthOrChunksIs411) {
  const HttpRefusal refusal = ExplainHttpRefusal(
      TestRoutes(), Request("POST", "/v1/images/generations"), 400, kMaxBody);
  EXPECT_EQ(refusal.http_status, 411);
  EXPECT_THAT(refusal.status.message(),
              HasSubstr("came without a Content-Length header or chunked "
                        "transfer encoding"));

  // Framed bodies that cpp-httplib could not read are another cause.
  httplib::Request chunked = Request("POST", "/v1/images/generations");
  chunked.set_header("Transfer-Encoding", "Chunked");
  httplib::Request sized = Request("POST", "/v1/images/generations");
  sized.set_header("Content-Length", "12");
  for (const httplib::Request& framed : {chunked, sized}) {
    const HttpRefusal unread =
        ExplainHttpRefusal(TestRoutes(), framed, 400, kMaxBody);
    EXPECT_EQ(unread.http_status, 400);
    EXPECT_THAT(unread.status.message(),
                HasSubstr("HTTP 400 for POST /v1/images/generations: the "
                          "request line, headers or body could not be read"));
  }
}

// A body on a method that takes none (refused before it could be taken for
// the connection's next request) is named with the header that framed it.
TEST(ExplainHttpRefusalTest, ABodyOnAMethodThatTakesNoneIs400NamingItsFraming) {
  httplib::Request sized = Request("GET", "/v1/models");
  sized.set_header("Content-Length", "31");
  const HttpRefusal refusal =
      ExplainHttpRefusal(TestRoutes(), sized, 400, kMaxBody);
  EXPECT_EQ(refusal.http_status, 400);
  EXPECT_EQ(refusal.status.message(),
            "GET /v1/models came with a body (Content-Length: 31); GET takes "
            "none here");
  httplib::Request chunked = Request("OPTIONS", "/v1/models");
  chunked.set_header("Transfer-Encoding", "chunked");
  EXPECT_EQ(
      ExplainHttpRefusal(TestRoutes(), chunked, 400, kMaxBody).status.message(),
      "OPTIONS /v1/models came with a body (Transfer-Encoding: chunked); "
      "OPTIONS takes none here");
}

}  // namespace
}  // namespace ditserve::server
