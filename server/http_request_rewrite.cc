#include "server/http_request_rewrite.h"

#include <httplib.h>

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace ditserve::server {

void RewriteRequestHeaders(httplib::Request& request) {
  request.ranges.clear();
  request.headers.erase("Range");
  request.headers.erase("Accept-Encoding");
  if (request.is_multipart_form_data()) {
    const std::string sent = request.get_header_value("Content-Type");
    request.headers.erase("Content-Type");
    request.headers.emplace("Content-Type",
                            absl::StrCat(kUnparsedMultipartPrefix, sent));
  }
}

std::string SentContentType(const httplib::Request& request) {
  return std::string(absl::StripPrefix(request.get_header_value("Content-Type"),
                                       kUnparsedMultipartPrefix));
}

bool SentJson(const httplib::Request& request) {
  const std::string sent = SentContentType(request);
  const absl::string_view media_type = absl::StripAsciiWhitespace(
      absl::string_view(sent).substr(0, std::min(sent.find(';'), sent.size())));
  return absl::EqualsIgnoreCase(media_type, "application/json");
}

}  // namespace ditserve::server
