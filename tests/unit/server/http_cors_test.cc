#include "server/http_cors.h"

#include <httplib.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ditserve::server {
namespace {

using ::testing::HasSubstr;

const std::vector<HttpRoute>& TestRoutes() {
  static const auto* routes = new std::vector<HttpRoute>{
      {"POST", "/v1/images/generations", "POST /v1/images/generations"},
      {"GET", "/v1/models", "GET /v1/models"}};
  return *routes;
}

httplib::Request Preflight(const std::string& origin, const std::string& path,
                           const std::string& method) {
  httplib::Request request;
  request.method = "OPTIONS";
  request.path = path;
  request.set_header("Origin", origin);
  request.set_header("Access-Control-Request-Method", method);
  return request;
}

std::string ErrorMessage(const httplib::Response& response) {
  return nlohmann::json::parse(response.body)["error"]["message"];
}

TEST(CorsPolicyTest, TheFlagTakesNothingAStarOrOrigins) {
  EXPECT_FALSE(CorsPolicy::FromFlag("")->enabled());
  EXPECT_EQ(CorsPolicy::FromFlag("")->Describe(), "off");
  const absl::StatusOr<CorsPolicy> any = CorsPolicy::FromFlag("*");
  EXPECT_TRUE(any->Allows("https://anything.example"));
  EXPECT_EQ(any->Describe(), "any origin");
  const absl::StatusOr<CorsPolicy> listed = CorsPolicy::FromFlag(
      "https://app.example.com, http://localhost:3000,http://[::1]:8080");
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_TRUE(listed->Allows("http://localhost:3000"));
  EXPECT_TRUE(listed->Allows("http://[::1]:8080"));
  EXPECT_FALSE(listed->Allows("http://localhost:3001"));
  EXPECT_FALSE(listed->Allows("https://app.example.com.evil.example"));
  EXPECT_EQ(listed->Describe(),
            "https://app.example.com, http://localhost:3000, "
            "http://[::1]:8080");
}

TEST(CorsPolicyTest, AnEntryThatIsNotAnOriginIsRefusedNamingIt) {
  for (const std::string bad :
       {"https://app.example.com/", "app.example.com", "https://a.example/x",
        "*,https://a.example", "null", "ftp://a.example"}) {
    const absl::StatusOr<CorsPolicy> policy = CorsPolicy::FromFlag(bad);
    ASSERT_FALSE(policy.ok()) << bad;
    EXPECT_EQ(policy.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(policy.status().message()),
                HasSubstr("--http_cors_origins entry \""))
        << bad;
  }
}

TEST(CorsPolicyTest, APreflightFromAnAllowedOriginGetsWhatTheRouteTakes) {
  const CorsPolicy policy =
      CorsPolicy::FromFlag("http://localhost:3000").value();
  httplib::Request request =
      Preflight("http://localhost:3000", "/v1/images/generations", "POST");
  request.set_header("Access-Control-Request-Headers",
                     "authorization,content-type,x-stainless-os");
  httplib::Response response;
  EXPECT_TRUE(policy.Handle(TestRoutes(), request, response));
  EXPECT_EQ(response.status, 204);
  EXPECT_EQ(response.get_header_value("Access-Control-Allow-Origin"),
            "http://localhost:3000");
  EXPECT_EQ(response.get_header_value("Vary"), "Origin");
  EXPECT_EQ(response.get_header_value("Access-Control-Allow-Methods"), "POST");
  EXPECT_EQ(response.get_header_value("Access-Control-Allow-Headers"),
            "authorization,content-type,x-stainless-os");
  EXPECT_EQ(response.get_header_value("Access-Control-Max-Age"), "600");
}

TEST(CorsPolicyTest, APreflightThatCannotSucceedIsToldWhy) {
  const CorsPolicy policy =
      CorsPolicy::FromFlag("http://localhost:3000").value();
  const struct {
    CorsPolicy policy;
    httplib::Request request;
    std::string message;
  } cases[] = {
      {policy, Preflight("http://evil.example", "/v1/models", "GET"),
       "origin http://evil.example is not in --http_cors_origins"},
      {policy, Preflight("http://localhost:3000", "/v1/models", "DELETE"),
       "DELETE is not allowed on /v1/models; it takes GET, HEAD"},
      {policy, Preflight("http://localhost:3000", "/v1/edits", "POST"),
       "no route /v1/edits"},
      {CorsPolicy(), Preflight("http://localhost:3000", "/v1/models", "GET"),
       "cross-origin calls (from http://localhost:3000) are off on this "
       "server; its operator can allow origins with --http_cors_origins"},
  };
  for (const auto& refused : cases) {
    httplib::Response response;
    EXPECT_TRUE(refused.policy.Handle(TestRoutes(), refused.request, response));
    EXPECT_EQ(response.status, 403) << refused.message;
    EXPECT_EQ(ErrorMessage(response), refused.message);
    EXPECT_FALSE(response.has_header("Access-Control-Allow-Origin"));
  }
}

TEST(CorsPolicyTest, OtherRequestsGoOnWithHeadersOnlyForAllowedOrigins) {
  const CorsPolicy policy =
      CorsPolicy::FromFlag("http://localhost:3000").value();
  httplib::Request request;
  request.method = "POST";
  request.path = "/v1/images/generations";
  httplib::Response without_origin;
  EXPECT_FALSE(policy.Handle(TestRoutes(), request, without_origin));
  EXPECT_TRUE(without_origin.headers.empty());

  request.set_header("Origin", "http://localhost:3000");
  httplib::Response allowed;
  EXPECT_FALSE(policy.Handle(TestRoutes(), request, allowed));
  EXPECT_EQ(allowed.get_header_value("Access-Control-Allow-Origin"),
            "http://localhost:3000");
  EXPECT_THAT(allowed.get_header_value("Access-Control-Expose-Headers"),
              HasSubstr("X-Request-Id"));

  httplib::Request other = request;
  other.headers.erase("Origin");
  other.set_header("Origin", "http://evil.example");
  httplib::Response refused;
  EXPECT_FALSE(policy.Handle(TestRoutes(), other, refused));
  EXPECT_FALSE(refused.has_header("Access-Control-Allow-Origin"));
}

}  // namespace
}  // namespace ditserve::server
