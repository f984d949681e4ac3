#include "clients/ditctl/error_messages.h"

#include "absl/strings/str_cat.h"

namespace ditserve::ditctl {
namespace {

const char* Advice(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "the request was refused; fix the named field (`ditctl info` "
             "lists defaults and limits)";
    case grpc::StatusCode::NOT_FOUND:
      return "the server does not serve that model or service";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "the server is not ready for this request";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "the server is busy or the request exceeds its limits; retry "
             "later or ask for less";
    case grpc::StatusCode::UNAVAILABLE:
      return "the server is unreachable, draining or lost a rank; check it "
             "is running and healthy (`ditctl health`)";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "the request did not finish in time; raise --timeout or ask for "
             "fewer steps or a smaller image";
    case grpc::StatusCode::CANCELLED:
      return "the request was cancelled";
    case grpc::StatusCode::INTERNAL:
      return "the server failed while running the request; its log names "
             "the rank and cause";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "the server does not implement this method (version mismatch?)";
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::UNAUTHENTICATED:
      return "the server refused the credentials";
    default:
      return "the call failed";
  }
}

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN_CODE";
  }
}

}  // namespace

std::string DescribeError(const grpc::Status& status,
                          const std::string& server_address) {
  return absl::StrCat(CodeName(status.error_code()), " from ", server_address,
                      ": ", Advice(status.error_code()),
                      ". Server said: ", status.error_message());
}

}  // namespace ditserve::ditctl
