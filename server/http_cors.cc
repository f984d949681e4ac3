#include "server/http_cors.h"

#include <httplib.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "re2/re2.h"
#include "server/openai_images.h"

namespace ditserve::server {
namespace {

constexpr char kFlag[] = "--http_cors_origins";
// How long a browser may reuse a preflight's answer.
constexpr char kPreflightMaxAgeSeconds[] = "600";
// Headers a page may read beyond the ones CORS always lets through.
constexpr char kExposedHeaders[] =
    "X-Request-Id, Retry-After, X-Should-Retry, WWW-Authenticate";

// An origin as a browser's Origin header has it: scheme, host and an
// optional port, nothing after.
bool IsOrigin(absl::string_view text) {
  static const re2::RE2* const kOrigin = new re2::RE2(
      R"(https?://([A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?)");
  return re2::RE2::FullMatch(re2::StringPiece(text.data(), text.size()),
                             *kOrigin);
}

void AllowOrigin(const std::string& origin, httplib::Response& response) {
  response.set_header("Access-Control-Allow-Origin", origin);
  // The answer depends on the Origin header, so caches must key on it.
  response.set_header("Vary", "Origin");
}

void Refuse(absl::string_view why, httplib::Response& response) {
  response.status = 403;
  response.set_content(ErrorBody(absl::PermissionDeniedError(why)),
                       "application/json");
}

}  // namespace

absl::StatusOr<CorsPolicy> CorsPolicy::FromFlag(absl::string_view origins) {
  CorsPolicy policy;
  if (origins == "*") {
    policy.any_origin_ = true;
    return policy;
  }
  for (absl::string_view entry :
       absl::StrSplit(origins, ',', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    if (!IsOrigin(entry)) {
      return absl::InvalidArgumentError(absl::StrCat(
          kFlag, " entry \"", entry,
          "\": allowed \"*\" alone, or origins such as "
          "https://app.example.com or http://localhost:3000 (scheme, host, "
          "optional port; no path or trailing slash), comma-separated"));
    }
    policy.origins_.emplace_back(entry);
  }
  return policy;
}

bool CorsPolicy::Allows(absl::string_view origin) const {
  return any_origin_ ||
         std::find(origins_.begin(), origins_.end(), origin) != origins_.end();
}

std::string CorsPolicy::Describe() const {
  if (any_origin_) return "any origin";
  if (origins_.empty()) return "off";
  return absl::StrJoin(origins_, ", ");
}

bool CorsPolicy::Handle(const std::vector<HttpRoute>& routes,
                        const httplib::Request& request,
                        httplib::Response& response) const {
  const std::string origin = request.get_header_value("Origin");
  if (origin.empty()) return false;
  const bool preflight = request.method == "OPTIONS" &&
                         request.has_header("Access-Control-Request-Method");
  if (!preflight) {
    if (Allows(origin)) {
      AllowOrigin(origin, response);
      response.set_header("Access-Control-Expose-Headers", kExposedHeaders);
    }
    return false;
  }
  if (!enabled()) {
    Refuse(absl::StrCat("cross-origin calls (from ", origin,
                        ") are off on this server; its operator can allow "
                        "origins with ",
                        kFlag),
           response);
    return true;
  }
  if (!Allows(origin)) {
    Refuse(absl::StrCat("origin ", origin, " is not in ", kFlag), response);
    return true;
  }
  const std::string method =
      request.get_header_value("Access-Control-Request-Method");
  const std::vector<std::string> methods =
      MethodsAllowedOn(routes, request.path);
  if (std::find(methods.begin(), methods.end(), method) == methods.end()) {
    Refuse(methods.empty()
               ? absl::StrCat("no route ", request.path)
               : absl::StrCat(method, " is not allowed on ", request.path,
                              "; it takes ", absl::StrJoin(methods, ", ")),
           response);
    return true;
  }
  response.status = 204;
  AllowOrigin(origin, response);
  response.set_header("Access-Control-Allow-Methods",
                      absl::StrJoin(methods, ", "));
  // The SDKs send headers of their own (OpenAI's x-stainless-*); any the
  // page asks for may come, as the token decides what a call may do.
  if (request.has_header("Access-Control-Request-Headers")) {
    response.set_header(
        "Access-Control-Allow-Headers",
        request.get_header_value("Access-Control-Request-Headers"));
  }
  response.set_header("Access-Control-Max-Age", kPreflightMaxAgeSeconds);
  return true;
}

}  // namespace ditserve::server
