#include "tools/local_cluster/rank_launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "tools/local_cluster/port_claims.h"

extern char** environ;

namespace ditserve::local_cluster {
namespace {

constexpr std::chrono::milliseconds kPollInterval{20};

absl::Status ErrnoError(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// The lowest port the kernel gives outgoing connections their local end from
// (net.ipv4.ip_local_port_range), or Linux's default when unreadable.
int FirstEphemeralPort() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int first = 0;
  if (range >> first && first > 0) return first;
  return 32768;
}

// Whether 127.0.0.1:`port` can be bound now (it is bound and released).
absl::StatusOr<bool> CanBind(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return ErrnoError("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool bound =
      bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return bound;
}

}  // namespace

int ConnectToLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
      0) {
    close(fd);
    return -1;
  }
  return fd;
}

absl::StatusOr<int> PickFreePort() {
  // Ports are drawn at random below the ephemeral range: a port the kernel
  // picks for bind(:0) lies in the range it also gives outgoing connections,
  // and a Gloo pair or gRPC channel of a test running beside this one took
  // such a port before our server bound it (seen in CI). The kernel may also
  // hand a released port out again at once, so no port is returned twice per
  // process (a cluster's store and its gRPC server once got the same one).
  // Two tests side by side once drew the same port (seen in CI), so each port
  // is also claimed for this process's lifetime.
  static std::mutex mutex;
  static std::set<int>* const handed_out = new std::set<int>();
  static std::mt19937* const random = new std::mt19937(std::random_device{}());
  static PortClaims* claims = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (claims == nullptr) {
    ASSIGN_OR_RETURN(std::unique_ptr<PortClaims> opened,
                     PortClaims::Open(PortClaims::DefaultPath()));
    claims = opened.release();
  }
  const int end = FirstEphemeralPort();
  std::uniform_int_distribution<int> draw(std::max(1024, end - 12000),
                                          std::max(1025, end) - 1);
  constexpr int kAttempts = 200;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const int port = draw(*random);
    if (handed_out->count(port) > 0) continue;
    ASSIGN_OR_RETURN(bool claimed, claims->Claim(port));
    if (!claimed) continue;
    ASSIGN_OR_RETURN(bool free, CanBind(port));
    if (free) {
      handed_out->insert(port);
      return port;
    }
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "no free port on 127.0.0.1 below ", end, " in ", kAttempts, " attempts"));
}

absl::StatusOr<std::unique_ptr<RankLauncher>> RankLauncher::Start(
    const std::string& program, const std::vector<std::string>& args,
    int world_size, const std::vector<std::string>& extra_env,
    const GroupPlacement& placement) {
  if (!placement.ranks.empty() &&
      placement.ranks.size() != static_cast<size_t>(world_size)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the placement names ", placement.ranks.size(),
                     " ranks for a world of ", world_size));
  }
  std::unique_ptr<RankLauncher> launcher(new RankLauncher());
  ASSIGN_OR_RETURN(int port, PickFreePort());
  launcher->port_ = port;
  std::string pattern =
      (std::filesystem::temp_directory_path() / "ditserve-ranks-XXXXXX")
          .string();
  if (mkdtemp(pattern.data()) == nullptr) return ErrnoError("mkdtemp");
  launcher->directory_ = pattern;

  launcher->program_ = program;
  launcher->args_ = args;
  launcher->extra_env_ = extra_env;
  launcher->placement_ = placement;
  for (int rank = 0; rank < world_size; ++rank) {
    launcher->pids_.push_back(0);
    launcher->output_paths_.push_back(
        absl::StrCat(launcher->directory_, "/rank", rank, ".log"));
    launcher->exits_.push_back({.rank = rank});
    // Until Spawn succeeds there is no process to signal or reap.
    launcher->reaped_.push_back(true);
  }
  for (int rank = 0; rank < world_size; ++rank) {
    RETURN_IF_ERROR(launcher->Spawn(rank, O_TRUNC));
  }
  return launcher;
}

absl::Status RankLauncher::Spawn(int rank, int output_mode) {
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls are allowed. Variables are kept by name, so
  // that a later entry replaces an inherited or shared one (getenv would
  // read only the first of two).
  std::map<std::string, std::string> variables;
  const auto set = [&variables](const std::string& entry) {
    variables[entry.substr(0, entry.find('='))] = entry;
  };
  for (char** entry = environ; *entry != nullptr; ++entry) set(*entry);
  set(absl::StrCat("RANK=", rank));
  set(absl::StrCat("WORLD_SIZE=", world_size()));
  set(absl::StrCat("LOCAL_RANK=", rank));
  set(absl::StrCat("MASTER_ADDR=", placement_.master_addr));
  set(absl::StrCat("MASTER_PORT=", port_));
  for (const std::string& entry : extra_env_) set(entry);
  std::vector<std::string> argv_strings;
  if (!placement_.ranks.empty()) {
    const RankPlacement& place = placement_.ranks[rank];
    for (const std::string& entry : place.env) set(entry);
    argv_strings = place.command_prefix;
  }
  std::vector<char*> envp;
  for (auto& [name, entry] : variables) envp.push_back(entry.data());
  envp.push_back(nullptr);
  argv_strings.push_back(program_);
  argv_strings.insert(argv_strings.end(), args_.begin(), args_.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::string& output_path = output_paths_[rank];
  const int output = open(output_path.c_str(),
                          O_WRONLY | O_CREAT | O_CLOEXEC | output_mode, 0644);
  if (output < 0) return ErrnoError(absl::StrCat("open ", output_path));
  const pid_t parent = getpid();

  const pid_t pid = fork();
  if (pid < 0) {
    close(output);
    return ErrnoError("fork");
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The parent may have died between fork and prctl.
    if (getppid() != parent) _exit(127);
    dup2(output, STDOUT_FILENO);
    dup2(output, STDERR_FILENO);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(output);
  pids_[rank] = pid;
  exits_[rank] = {.rank = rank};
  reaped_[rank] = false;
  return absl::OkStatus();
}

absl::Status RankLauncher::Restart(int rank) {
  if (!Reap(rank)) {
    return absl::FailedPreconditionError(
        absl::StrCat("rank ", rank, " is still running; stop it first"));
  }
  return Spawn(rank, O_APPEND);
}

RankLauncher::~RankLauncher() {
  for (int rank = 0; rank < world_size(); ++rank) {
    if (reaped_[rank]) continue;
    kill(pids_[rank], SIGKILL);
    waitpid(pids_[rank], nullptr, 0);
  }
  if (!directory_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
  }
}

std::string RankLauncher::Output(int rank) const {
  std::ifstream file(output_paths_[rank]);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool RankLauncher::WaitForOutput(int rank, const std::string& text,
                                 std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Output(rank).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(kPollInterval);
  }
  return Output(rank).find(text) != std::string::npos;
}

void RankLauncher::Kill(int rank) { Signal(rank, SIGKILL); }

void RankLauncher::Signal(int rank, int signal) {
  if (!reaped_[rank]) kill(pids_[rank], signal);
}

bool RankLauncher::Reap(int rank) {
  if (reaped_[rank]) return true;
  int status = 0;
  if (waitpid(pids_[rank], &status, WNOHANG) != pids_[rank]) return false;
  reaped_[rank] = true;
  if (WIFEXITED(status)) {
    exits_[rank].exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exits_[rank].signal = WTERMSIG(status);
  }
  return true;
}

std::vector<int> RankLauncher::Exited() {
  std::vector<int> exited;
  for (int rank = 0; rank < world_size(); ++rank) {
    if (Reap(rank)) exited.push_back(rank);
  }
  return exited;
}

RankExit RankLauncher::Wait(int rank, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!Reap(rank) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kPollInterval);
  }
  if (!Reap(rank)) {
    exits_[rank].timed_out = true;
    kill(pids_[rank], SIGKILL);
    while (!Reap(rank)) std::this_thread::sleep_for(kPollInterval);
  }
  return exits_[rank];
}

std::vector<RankExit> RankLauncher::WaitAll(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<RankExit> exits;
  for (int rank = 0; rank < world_size(); ++rank) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    exits.push_back(Wait(rank, std::max(left, std::chrono::milliseconds(0))));
  }
  return exits;
}

}  // namespace ditserve::local_cluster
