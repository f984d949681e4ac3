#ifndef DITSERVE_CORE_CONFIG_FIELD_ERROR_H_
#define DITSERVE_CORE_CONFIG_FIELD_ERROR_H_

// Which GenerateRequest fields a refusal is about, carried in the status's
// payload beside the message (which names them too), so that each server can
// tell its clients which field to fix in their own terms: gRPC as
// google.rpc.BadRequest field violations, the HTTP API as OpenAI's "param".

#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ditserve::config {

// `status` with `fields` (GenerateRequest field names, the one to fix first
// first) attached.
absl::Status WithFields(absl::Status status,
                        std::initializer_list<absl::string_view> fields);

// INVALID_ARGUMENT with `message` about `field`.
absl::Status InvalidField(absl::string_view field, absl::string_view message);

// The fields attached to `status`; empty when none are.
std::vector<std::string> ErrorFields(const absl::Status& status);

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_FIELD_ERROR_H_
