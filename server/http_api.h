#ifndef DITSERVE_SERVER_HTTP_API_H_
#define DITSERVE_SERVER_HTTP_API_H_

// The OpenAI-compatible HTTP API on --http_port:
//   POST /v1/images/generations  (openai_images.h)
//   GET  /v1/models, /v1/models/{model}
//   GET  /health                 200 while serving, 503 otherwise
// Requests go through the same RequestIntake as gRPC: Freeze, admission,
// metrics. A client that disconnects cancels its run. Bearer tokens come in
// the Authorization header. A generation's request id (the body's
// request_id, else the X-Request-Id header, else the host's) is returned in
// the X-Request-Id header once the request is frozen. Web pages of the
// origins --http_cors_origins names may call it from browsers.

#include <atomic>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ditserve/v1/input_config.pb.h"
#include "server/bearer_auth.h"
#include "server/health_service.h"
#include "server/http_cors.h"
#include "server/request_intake.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace ditserve::server {

class HttpApi {
 public:
  // Every route but /health needs a token when `auth` is enabled; /health
  // too when it guards health. `cors` says which web origins may call it;
  // `access_log` logs each request (http_access_log.h).
  HttpApi(RequestIntake* intake, const HealthService* health,
          const BearerAuth* auth, const CorsPolicy* cors, bool access_log);

  // Handler threads the API's HttpServer needs: one per request that can be
  // running or queued, plus some for health checks, model lists and the
  // idle connections of clients' pools.
  int threads() const;

  void AddRoutes(httplib::Server& server) const;

  // Waits at most `timeout` for every admitted event stream to end. Stopping
  // the HTTP server ends a stream between two of its writes, so a stream
  // whose job just finished would lose its last events: the host waits for
  // them between its drain and that stop.
  void WaitForOpenStreams(absl::Duration timeout) const;

 private:
  // `body`: the request's JSON; `client`: the name of the caller's bearer
  // token (bearer_auth.h).
  void GenerateImages(const httplib::Request& request, const std::string& body,
                      const std::string& client,
                      httplib::Response& response) const;
  // "stream": true: the admitted job's events as server-sent events.
  void StreamImages(const httplib::Request& request, v1::InputConfig config,
                    const std::string& client, absl::Time received,
                    httplib::Response& response) const;
  void ListModels(httplib::Response& response) const;
  void GetModel(const httplib::Request& request,
                httplib::Response& response) const;
  void Health(httplib::Response& response) const;

  // The caller's client name (BearerAuth::Authenticate), or an error
  // already written to `response`.
  absl::StatusOr<std::string> Authorize(const httplib::Request& request,
                                        httplib::Response& response,
                                        bool is_health) const;

  RequestIntake* const intake_;
  const HealthService* const health_;
  const BearerAuth* const auth_;
  const CorsPolicy* const cors_;
  const bool access_log_;
  // Event streams admitted and not yet ended.
  mutable std::atomic<int> open_streams_{0};
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_HTTP_API_H_
