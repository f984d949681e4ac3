#include "core/dist/control_frame.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/config/config_digest.h"

namespace ditserve::dist {
namespace {

google::protobuf::MessageLite& MutableBodyOf(ControlMessage& message) {
  switch (message.kind) {
    case v1::CONTROL_KIND_RUN:
      return message.run;
    case v1::CONTROL_KIND_PING:
      return message.ping;
    default:
      return message.shutdown;
  }
}

}  // namespace

bool IsKnownControlKind(int64_t kind) {
  return kind == v1::CONTROL_KIND_RUN || kind == v1::CONTROL_KIND_PING ||
         kind == v1::CONTROL_KIND_SHUTDOWN;
}

std::string ControlKindName(v1::ControlKind kind) {
  switch (kind) {
    case v1::CONTROL_KIND_RUN:
      return "RunConfig";
    case v1::CONTROL_KIND_PING:
      return "Ping";
    case v1::CONTROL_KIND_SHUTDOWN:
      return "Shutdown";
    default:
      return absl::StrCat("control kind ", static_cast<int>(kind));
  }
}

const google::protobuf::MessageLite& ControlBody(
    const ControlMessage& message) {
  switch (message.kind) {
    case v1::CONTROL_KIND_RUN:
      return message.run;
    case v1::CONTROL_KIND_PING:
      return message.ping;
    default:
      return message.shutdown;
  }
}

absl::Status CheckControlFrameHeader(int64_t kind, int64_t length,
                                     int64_t max_message_bytes) {
  if (!IsKnownControlKind(kind)) {
    return absl::InternalError(
        absl::StrCat("control frame header names unknown kind ", kind,
                     " (length ", length, ")"));
  }
  if (length < 0 || length > max_message_bytes) {
    return absl::InternalError(absl::StrCat(
        "control frame for ",
        ControlKindName(static_cast<v1::ControlKind>(kind)), " announces ",
        length, " bytes; expected 0..", max_message_bytes));
  }
  return absl::OkStatus();
}

ControlMessage DecodeControlPayload(
    v1::ControlKind kind, std::string payload,
    const std::function<void(v1::RunConfig&)>& alter_parsed_run_config) {
  ControlMessage message;
  message.kind = kind;
  message.payload = std::move(payload);
  google::protobuf::MessageLite& body = MutableBodyOf(message);
  if (!body.ParseFromString(message.payload)) {
    message.digest = kUnparsedDigest;
    return message;
  }
  if (kind == v1::CONTROL_KIND_RUN && alter_parsed_run_config) {
    alter_parsed_run_config(message.run);
  }
  message.digest = config::MessageDigest(body);
  return message;
}

}  // namespace ditserve::dist
