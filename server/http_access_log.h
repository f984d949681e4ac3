#ifndef DITSERVE_SERVER_HTTP_ACCESS_LOG_H_
#define DITSERVE_SERVER_HTTP_ACCESS_LOG_H_

// One host log line per HTTP API request (--http_access_log), as web
// servers keep them: who asked for what, the answer's status and size, how
// long it took, and the request id that joins it to the run's own lines.
// Successful health checks are left out: probes would fill the log.

#include <string>

#include "absl/time/time.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace ditserve::server {

// Marks the start of the request this thread now handles; called before
// routing, so that the line can say how long the answer took.
void StartHttpAccessTimer();

// The client name of the request this thread handles (bearer_auth.h), once
// its token is known; the line names it.
void SetHttpAccessClient(const std::string& client);

// Logs `request` and its `response` once the response has been written.
void LogHttpAccess(const httplib::Request& request,
                   const httplib::Response& response);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_HTTP_ACCESS_LOG_H_
