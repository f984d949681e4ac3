#ifndef DITSERVE_WORKER_LOGGING_H_
#define DITSERVE_WORKER_LOGGING_H_

#include <string>

#include "absl/status/status.h"

namespace ditserve::worker {

// Sends spdlog's default logger to stderr, one line per event carrying the
// rank: "text" (human-readable) or "json" (one object per line with time,
// level, rank and msg). INVALID_ARGUMENT for another format.
absl::Status ConfigureLogging(int rank, const std::string& format);

}  // namespace ditserve::worker

#endif  // DITSERVE_WORKER_LOGGING_H_
