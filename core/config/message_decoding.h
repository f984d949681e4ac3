#ifndef DITSERVE_CORE_CONFIG_MESSAGE_DECODING_H_
#define DITSERVE_CORE_CONFIG_MESSAGE_DECODING_H_

// Parsing request bytes ourselves rather than in gRPC's generated handlers,
// which answer any message that does not parse with UNIMPLEMENTED and an
// empty message. The first step of a request's way to a frozen config.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace ditserve::config {

// Parses `bytes` into `message`. INVALID_ARGUMENT naming what failed: the
// path of a string field that is not UTF-8 (e.g. "prompt[1]") with the
// offset of its first bad byte, a nested message that does not parse, or
// bytes that are not a protobuf encoding at all.
absl::Status ParseRequest(absl::string_view bytes,
                          google::protobuf::Message& message);

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_MESSAGE_DECODING_H_
