#include "server/http_refusal.h"

#include <httplib.h>

#include <cstdint>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/utf8.h"
#include "server/http_request_rewrite.h"
#include "server/http_server.h"

namespace ditserve::server {
namespace {

std::string Shown(const std::vector<HttpRoute>& routes) {
  std::vector<std::string> shown;
  for (const HttpRoute& route : routes) shown.push_back(route.shown);
  return absl::StrJoin(shown, ", ");
}

HttpRefusal NoSuchRoute(const std::vector<HttpRoute>& routes,
                        const httplib::Request& request) {
  const std::vector<std::string> allowed =
      MethodsAllowedOn(routes, request.path);
  if (allowed.empty()) {
    return {absl::NotFoundError(absl::StrCat(
                "no route ", request.method, " ", base::Shortened(request.path),
                "; this server offers ", Shown(routes))),
            404};
  }
  const std::string allow = absl::StrJoin(allowed, ", ");
  return {absl::InvalidArgumentError(absl::StrCat(
              request.method, " is not allowed on ",
              base::Shortened(request.path), "; it takes ", allow)),
          405, allow};
}

}  // namespace

HttpRoute::HttpRoute(std::string method, const std::string& pattern,
                     std::string shown)
    : method(std::move(method)),
      path(pattern, std::regex::ECMAScript),
      shown(std::move(shown)) {}

std::vector<std::string> MethodsAllowedOn(const std::vector<HttpRoute>& routes,
                                          const std::string& path) {
  std::vector<std::string> allowed;
  for (const HttpRoute& route : routes) {
    if (!std::regex_match(path, route.path)) continue;
    allowed.push_back(route.method);
    if (route.method == "GET") allowed.push_back("HEAD");
  }
  return allowed;
}

HttpRefusal ExplainHttpRefusal(const std::vector<HttpRoute>& routes,
                               const httplib::Request& request, int http_status,
                               size_t max_body_bytes) {
  const std::string target =
      absl::StrCat(request.method, " ", base::Shortened(request.path));
  if (http_status == 404) return NoSuchRoute(routes, request);
  if (http_status == 413) {
    uint64_t sent = 0;
    const bool has_length =
        absl::SimpleAtoi(request.get_header_value("Content-Length"), &sent);
    std::string why;
    if (has_length && sent > max_body_bytes) {
      why = absl::StrCat("has ", sent, " bytes");
    } else if (has_length) {
      // Within the limit as sent, past it once decompressed.
      why = absl::StrCat(
          "(Content-Encoding: ", request.get_header_value("Content-Encoding"),
          ") decompresses to more");
    } else {
      // A chunked body has no length to quote.
      why = "(sent without a Content-Length) is longer";
    }
    return {absl::InvalidArgumentError(absl::StrCat(
                "the body of ", target, " ", why, "; this API takes at most ",
                max_body_bytes, " bytes")),
            413};
  }
  if (http_status == 415) {
    const std::string sent = base::Shortened(SentContentType(request));
    return {
        absl::InvalidArgumentError(absl::StrCat(
            target, " takes a JSON body (Content-Type: application/json), not ",
            sent.empty() ? "a body without a Content-Type" : sent)),
        415};
  }
  if (http_status == 416) {
    // cpp-httplib refuses a Range it cannot parse before any handler runs;
    // one it can parse is dropped (RewriteRequestHeaders).
    return {absl::InvalidArgumentError(absl::StrCat(
                target,
                ": its Range header could not be read; this API ignores Range "
                "and sends whole answers, so leave it out")),
            416};
  }
  if (http_status == 400 && CarriesABodyOfAMethodThatTakesNone(request)) {
    const char* framing = request.has_header("Transfer-Encoding")
                              ? "Transfer-Encoding"
                              : "Content-Length";
    return {absl::InvalidArgumentError(
                absl::StrCat(target, " came with a body (", framing, ": ",
                             base::Shortened(request.get_header_value(framing)),
                             "); ", request.method, " takes none here")),
            400};
  }
  // cpp-httplib reads a body without a length to the end of the connection,
  // which a client waiting for its answer never closes: the read times out.
  const bool unframed_body =
      request.method == "POST" && !request.has_header("Content-Length") &&
      !absl::EqualsIgnoreCase(request.get_header_value("Transfer-Encoding"),
                              "chunked");
  if (http_status == 400 && unframed_body) {
    return {absl::InvalidArgumentError(absl::StrCat(
                target,
                " came without a Content-Length header or chunked transfer "
                "encoding; send its JSON body with one of them")),
            411};
  }
  return {absl::InvalidArgumentError(absl::StrCat(
              "HTTP ", http_status, " for ", target,
              ": the request line, headers or body could not be read")),
          http_status};
}

}  // namespace ditserve::server
