#include "server/status_conversion.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/config/field_error.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace ditserve::server {
namespace {

constexpr char kNotRetryable[] = "type.ditserve.dev/not-retryable";

}  // namespace

absl::Status MarkNotRetryable(absl::Status status) {
  if (!status.ok()) status.SetPayload(kNotRetryable, absl::Cord());
  return status;
}

bool IsNotRetryable(const absl::Status& status) {
  return status.GetPayload(kNotRetryable).has_value();
}

absl::Status RunFailure(const absl::Status& status, size_t requests_in_run) {
  if (!absl::IsResourceExhausted(status) || requests_in_run != 1) {
    return status;
  }
  absl::Status alone(
      status.code(),
      absl::StrCat(status.message(),
                   "; the request ran alone and would likely run short "
                   "again: ask for fewer or smaller outputs"));
  status.ForEachPayload(
      [&](absl::string_view type_url, const absl::Cord& payload) {
        alone.SetPayload(type_url, payload);
      });
  return MarkNotRetryable(std::move(alone));
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  const auto code = static_cast<grpc::StatusCode>(status.code());
  std::string message(status.message());
  const std::vector<std::string> fields = config::ErrorFields(status);
  if (fields.empty()) return grpc::Status(code, std::move(message));
  google::rpc::BadRequest bad_request;
  for (const std::string& field : fields) {
    google::rpc::BadRequest::FieldViolation* violation =
        bad_request.add_field_violations();
    violation->set_field(field);
    violation->set_description(message);
  }
  google::rpc::Status details;
  details.set_code(static_cast<int32_t>(code));
  details.set_message(message);
  details.add_details()->PackFrom(bad_request);
  return grpc::Status(code, std::move(message), details.SerializeAsString());
}

std::string StatusLabel(absl::StatusCode code) {
  return absl::AsciiStrToLower(absl::StatusCodeToString(code));
}

int HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kCancelled:
      return 499;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

}  // namespace ditserve::server
