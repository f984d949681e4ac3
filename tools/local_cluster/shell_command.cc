#include "tools/local_cluster/shell_command.h"

#include <sys/wait.h>

#include <cstdio>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::local_cluster {

ShellResult RunShell(const std::string& command) {
  ShellResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t read;
  while ((read = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    result.output.append(buffer, read);
  }
  const int status = ::pclose(pipe);
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

absl::StatusOr<std::string> ShellOutput(const std::string& command) {
  ShellResult result = RunShell(command);
  if (result.exit_code != 0) {
    return absl::InternalError(absl::StrCat(
        "`", command, "` exited with ", result.exit_code, ": ", result.output));
  }
  return std::move(result.output);
}

}  // namespace ditserve::local_cluster
