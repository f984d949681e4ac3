#ifndef DITSERVE_SERVER_HTTP_REFUSAL_H_
#define DITSERVE_SERVER_HTTP_REFUSAL_H_

// What the HTTP API tells a request that no route handled: one for a path it
// does not serve, one with a method the path does not take, or one that
// cpp-httplib refused before any route saw it (a body too large, a POST with
// no length). cpp-httplib leaves only a status code; this names the cause and
// the fix.

#include <cstddef>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace httplib {
struct Request;
}  // namespace httplib

namespace ditserve::server {

struct HttpRoute {
  // `pattern` is the path as cpp-httplib matches it (an ECMAScript regex,
  // whole path); `shown` how the refusals show the route, e.g.
  // "GET /v1/models/{model}".
  HttpRoute(std::string method, const std::string& pattern, std::string shown);

  std::string method;
  // Compiled once: every refusal and preflight matches the path against
  // every route.
  std::regex path;
  std::string shown;
};

struct HttpRefusal {
  absl::Status status;
  int http_status = 0;
  // The Allow header of a 405: the methods the path takes.
  std::string allow;
};

// The methods whose routes match all of `path`, HEAD after GET (cpp-httplib
// answers HEAD with a GET route's handler, minus the body); empty when no
// route does.
std::vector<std::string> MethodsAllowedOn(const std::vector<HttpRoute>& routes,
                                          const std::string& path);

// `http_status` is the code cpp-httplib set for `request`; `max_body_bytes`
// the body limit it enforces.
HttpRefusal ExplainHttpRefusal(const std::vector<HttpRoute>& routes,
                               const httplib::Request& request, int http_status,
                               size_t max_body_bytes);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_HTTP_REFUSAL_H_
