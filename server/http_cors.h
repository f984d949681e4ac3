#ifndef DITSERVE_SERVER_HTTP_CORS_H_
#define DITSERVE_SERVER_HTTP_CORS_H_

// Cross-origin calls to the HTTP API (--http_cors_origins), so that a web
// page served from another origin can call it from the browser, as OpenAI's
// API allows (the SDKs' dangerouslyAllowBrowser). Off by default: browsers
// then refuse such calls, and a preflight is told how to turn them on.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/http_refusal.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace ditserve::server {

class CorsPolicy {
 public:
  // Cross-origin calls off.
  CorsPolicy() = default;

  // `origins`: "" (off), "*" (any origin), or comma-separated origins as
  // browsers send them ("https://app.example.com", "http://localhost:3000").
  // INVALID_ARGUMENT naming the flag and the entry that is not one.
  static absl::StatusOr<CorsPolicy> FromFlag(absl::string_view origins);

  bool enabled() const { return any_origin_ || !origins_.empty(); }
  bool Allows(absl::string_view origin) const;
  // For the start-up log: "off", "any origin" or the list.
  std::string Describe() const;

  // Called before routing. A preflight (OPTIONS with Origin and
  // Access-Control-Request-Method) is answered here, without a token, as
  // browsers send none: 204 with what `routes` allow, or 403 saying why;
  // returns true then. Any other request from an allowed origin gets the
  // headers that let the page read its response; returns false.
  bool Handle(const std::vector<HttpRoute>& routes,
              const httplib::Request& request,
              httplib::Response& response) const;

 private:
  bool any_origin_ = false;
  std::vector<std::string> origins_;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_HTTP_CORS_H_
