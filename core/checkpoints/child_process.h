#ifndef DITSERVE_CORE_CHECKPOINTS_CHILD_PROCESS_H_
#define DITSERVE_CORE_CHECKPOINTS_CHILD_PROCESS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace ditserve::checkpoints {

// Runs `argv` (argv[0] looked up on PATH) in `working_dir` with stdout and
// stderr written to `log_path`, and waits at most `timeout` for it.
// OK when it exits with status 0. NOT_FOUND when the program cannot be
// started, DEADLINE_EXCEEDED when it was killed at the timeout, INTERNAL
// for another exit; messages name the program and end with the log's tail.
absl::Status RunChildProcess(const std::vector<std::string>& argv,
                             const std::string& working_dir,
                             const std::string& log_path,
                             absl::Duration timeout);

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_CHECKPOINTS_CHILD_PROCESS_H_
