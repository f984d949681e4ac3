#include "server/http_access_log.h"

#include <httplib.h>

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/base/monotonic_clock.h"
#include "server/bearer_auth.h"
#include "server/log_text.h"
#include "spdlog/spdlog.h"

namespace ditserve::server {
namespace {

// What the handler learnt of the request this thread handles: cpp-httplib
// handles a request on one thread from routing to logging.
struct AccessRecord {
  std::optional<absl::Time> start;
  std::string client;
};
thread_local AccessRecord current_request;

}  // namespace

void StartHttpAccessTimer() {
  current_request = {base::MonotonicNow(), kNoClient};
}

void SetHttpAccessClient(const std::string& client) {
  current_request.client = client;
}

void LogHttpAccess(const httplib::Request& request,
                   const httplib::Response& response) {
  const AccessRecord record = std::exchange(current_request, {});
  const std::optional<absl::Time>& start = record.start;
  const bool success = response.status >= 200 && response.status < 300;
  if (success && request.path == "/health") return;
  // A request cpp-httplib refused before routing has no start.
  const std::string took =
      start.has_value()
          ? absl::StrCat(" in ",
                         absl::FormatDuration(base::MonotonicNow() - *start))
          : "";
  const std::string size =
      absl::StrContains(response.get_header_value("Content-Type"),
                        "event-stream")
          ? "streamed"
          : absl::StrCat(response.body.size(), " bytes");
  const std::string request_id = response.get_header_value("X-Request-Id");
  spdlog::info(
      "http {}:{} \"{} {}\" {} {}{}{}{}", request.remote_addr,
      request.remote_port, LogText(request.method), LogText(request.path),
      response.status, size, took,
      request_id.empty() ? "" : absl::StrCat(" request_id=", request_id),
      ClientLogField(record.client));
}

}  // namespace ditserve::server
