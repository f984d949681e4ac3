#include "server/status_conversion.h"

#include "absl/strings/ascii.h"

namespace ditserve::server {

std::string StatusLabel(absl::StatusCode code) {
  return absl::AsciiStrToLower(absl::StatusCodeToString(code));
}

}  // namespace ditserve::server
