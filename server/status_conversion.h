#ifndef DITSERVE_SERVER_STATUS_CONVERSION_H_
#define DITSERVE_SERVER_STATUS_CONVERSION_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace ditserve::server {

// The same code (absl and gRPC share the canonical numbers) and message;
// a refusal about request fields (config::ErrorFields) also carries a
// google.rpc.Status with a google.rpc.BadRequest detail naming each field,
// gRPC's richer error model, for clients that act on the field.
grpc::Status ToGrpcStatus(const absl::Status& status);

// `status` marked as a refusal the same request always gets from this
// server (it exceeds a configured limit rather than meeting a full queue),
// so that clients are told not to retry it.
absl::Status MarkNotRetryable(absl::Status status);
// Whether `status` carries that mark.
bool IsNotRetryable(const absl::Status& status);

// What the requests of a failed run hear. A run fails RESOURCE_EXHAUSTED
// for want of memory (the GPU's, base::GuardedAs; a receive buffer's
// allocation; the WebP encoder's): a request that ran alone would likely run
// short again, so it is marked not retryable and told to ask for less
// (memory that other processes or a preview decode held at the time is the
// exception this accepts). One that ran batched with others may fit alone
// and keeps `status` as it is, as do other codes.
absl::Status RunFailure(const absl::Status& status, size_t requests_in_run);

// "ok", "invalid_argument", ... for the requests_total{status} label.
std::string StatusLabel(absl::StatusCode code);

// The HTTP status of an HTTP API answer with this code: 400, 401, 403, 404,
// 429, 499 (client closed the request, as nginx logs it), 501, 503, 504, or
// 500 for the rest.
int HttpStatusFor(absl::StatusCode code);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_STATUS_CONVERSION_H_
