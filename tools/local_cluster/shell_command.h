#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_SHELL_COMMAND_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_SHELL_COMMAND_H_

#include <string>

#include "absl/status/statusor.h"

namespace ditserve::local_cluster {

struct ShellResult {
  // The exit status; -1 when the command could not be started or was
  // killed by a signal.
  int exit_code = -1;
  // What it wrote to stdout (redirect 2>&1 in `command` for stderr too).
  std::string output;
};

// Runs `command` with /bin/sh and waits for it; tests bound it with
// `timeout N` in the command.
ShellResult RunShell(const std::string& command);

// RunShell's output, or INTERNAL naming the command, its exit code and its
// output when it does not exit 0.
absl::StatusOr<std::string> ShellOutput(const std::string& command);

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_SHELL_COMMAND_H_
