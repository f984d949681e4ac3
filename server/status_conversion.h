#ifndef DITSERVE_SERVER_STATUS_CONVERSION_H_
#define DITSERVE_SERVER_STATUS_CONVERSION_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace ditserve::server {

// absl and gRPC share the canonical code numbers.
inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

// "ok", "invalid_argument", ... for the requests_total{status} label.
std::string StatusLabel(absl::StatusCode code);

// The HTTP status of an HTTP API answer with this code: 400, 401, 403, 404,
// 429, 499 (client closed the request, as nginx logs it), 501, 503, 504, or
// 500 for the rest.
int HttpStatusFor(absl::StatusCode code);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_STATUS_CONVERSION_H_
