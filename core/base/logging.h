#ifndef DITSERVE_CORE_BASE_LOGGING_H_
#define DITSERVE_CORE_BASE_LOGGING_H_

#include <string>

#include "absl/status/status.h"

namespace ditserve::base {

// Sends spdlog's default logger to stderr, one line per event carrying the
// rank: "text" (human-readable) or "json" (one object per line with time,
// level, rank and msg). INVALID_ARGUMENT for another format.
absl::Status ConfigureLogging(int rank, const std::string& format);

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_LOGGING_H_
