#include "server/http_request_rewrite.h"

#include <httplib.h>

#include <string>

#include "gtest/gtest.h"

namespace ditserve::server {
namespace {

httplib::Request WithHeader(const std::string& name, const std::string& value) {
  httplib::Request request;
  request.method = "POST";
  request.path = "/v1/images/generations";
  request.set_header(name, value);
  return request;
}

TEST(RewriteRequestHeadersTest, RangesAreDroppedSoAnswersAreSentWhole) {
  httplib::Request request = WithHeader("range", "bytes=0-9,0-");
  request.ranges = {{0, 9}, {0, -1}};
  RewriteRequestHeaders(request);
  EXPECT_TRUE(request.ranges.empty());
  EXPECT_FALSE(request.has_header("Range"));
}

TEST(RewriteRequestHeadersTest, AcceptEncodingIsDroppedSoNothingIsCompressed) {
  httplib::Request request = WithHeader("Accept-Encoding", "gzip, br");
  RewriteRequestHeaders(request);
  EXPECT_FALSE(request.has_header("Accept-Encoding"));
}

TEST(RewriteRequestHeadersTest, MultipartIsReadAsBytesButNamedAsSent) {
  httplib::Request request =
      WithHeader("Content-Type", "multipart/form-data; boundary=xyz");
  ASSERT_TRUE(request.is_multipart_form_data());
  RewriteRequestHeaders(request);
  EXPECT_FALSE(request.is_multipart_form_data());
  EXPECT_EQ(SentContentType(request), "multipart/form-data; boundary=xyz");
  EXPECT_FALSE(SentJson(request));
}

TEST(RewriteRequestHeadersTest, JsonKeepsItsContentType) {
  httplib::Request request = WithHeader("Content-Type", "application/json");
  RewriteRequestHeaders(request);
  EXPECT_EQ(request.get_header_value("Content-Type"), "application/json");
}

TEST(SentJsonTest, TakesApplicationJsonWithParametersInAnyCase) {
  for (const std::string json : {"application/json", "Application/JSON",
                                 "application/json; charset=utf-8",
                                 " application/json ;charset=UTF-8"}) {
    EXPECT_TRUE(SentJson(WithHeader("Content-Type", json))) << json;
  }
  for (const std::string other :
       {"text/plain", "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded", "application/jsonl",
        "application/json-patch+json", ""}) {
    EXPECT_FALSE(SentJson(WithHeader("Content-Type", other))) << other;
  }
  httplib::Request none;
  EXPECT_FALSE(SentJson(none));
}

}  // namespace
}  // namespace ditserve::server
