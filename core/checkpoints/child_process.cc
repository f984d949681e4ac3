#include "core/checkpoints/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "core/base/monotonic_clock.h"

extern char** environ;

namespace ditserve::checkpoints {
namespace {

// Enough of a failing program's log to say why.
constexpr size_t kLogTailBytes = 2000;
constexpr absl::Duration kPollInterval = absl::Milliseconds(10);

std::string LogTail(const std::string& log_path) {
  std::ifstream in(log_path, std::ios::binary);
  const std::string log{std::istreambuf_iterator<char>(in), {}};
  if (log.empty()) return "(no output)";
  return log.size() <= kLogTailBytes
             ? log
             : absl::StrCat("...", log.substr(log.size() - kLogTailBytes));
}

// Owns the file actions of one spawn.
class SpawnFileActions {
 public:
  SpawnFileActions() { posix_spawn_file_actions_init(&actions_); }
  ~SpawnFileActions() { posix_spawn_file_actions_destroy(&actions_); }
  SpawnFileActions(const SpawnFileActions&) = delete;
  SpawnFileActions& operator=(const SpawnFileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

}  // namespace

absl::Status RunChildProcess(const std::vector<std::string>& argv,
                             const std::string& working_dir,
                             const std::string& log_path,
                             absl::Duration timeout) {
  if (argv.empty()) {
    return absl::InvalidArgumentError("RunChildProcess: argv is empty");
  }
  const std::string& program = argv[0];
  SpawnFileActions actions;
  int error =
      posix_spawn_file_actions_addchdir_np(actions.get(), working_dir.c_str());
  if (error == 0) {
    error = posix_spawn_file_actions_addopen(
        actions.get(), STDOUT_FILENO, log_path.c_str(),
        O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  if (error == 0) {
    error = posix_spawn_file_actions_adddup2(actions.get(), STDOUT_FILENO,
                                             STDERR_FILENO);
  }
  if (error != 0) {
    return absl::InternalError(
        absl::StrCat("preparing to run ", program, ": ", std::strerror(error)));
  }
  std::vector<char*> raw_argv;
  for (const std::string& arg : argv) {
    raw_argv.push_back(const_cast<char*>(arg.c_str()));
  }
  raw_argv.push_back(nullptr);
  pid_t pid = 0;
  error = posix_spawnp(&pid, program.c_str(), actions.get(), nullptr,
                       raw_argv.data(), environ);
  if (error != 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot run ", program, ": ", std::strerror(error)));
  }

  const absl::Time deadline = base::MonotonicNow() + timeout;
  int wait_status = 0;
  while (true) {
    const pid_t done = waitpid(pid, &wait_status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      return absl::InternalError(
          absl::StrCat("waiting for ", program, ": ", std::strerror(errno)));
    }
    if (base::MonotonicNow() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &wait_status, 0);
      return absl::DeadlineExceededError(absl::StrCat(
          program, " did not finish within ", absl::FormatDuration(timeout),
          " and was killed; its output: ", LogTail(log_path)));
    }
    absl::SleepFor(kPollInterval);
  }
  if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) {
    return absl::OkStatus();
  }
  const std::string how =
      WIFEXITED(wait_status)
          ? absl::StrCat("exited with status ", WEXITSTATUS(wait_status))
          : absl::StrCat("was killed by signal ", WTERMSIG(wait_status));
  return absl::InternalError(
      absl::StrCat(program, " ", how, "; its output: ", LogTail(log_path)));
}

}  // namespace ditserve::checkpoints
