#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_RANK_LAUNCHER_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_RANK_LAUNCHER_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ditserve::local_cluster {

// A TCP port on 127.0.0.1 that was free a moment ago (bound and released),
// below the kernel's ephemeral range so that no outgoing connection takes it
// meanwhile, for a rendezvous or a server under test; never one this process
// was given before, nor one another process claimed (PortClaims) and is still
// running.
absl::StatusOr<int> PickFreePort();

// A TCP connection to 127.0.0.1:`port`, which the caller closes; -1 when
// nothing accepts there.
int ConnectToLoopback(int port);

// How one rank process ended.
struct RankExit {
  int rank = 0;
  // Exit status, or -1 when a signal ended it.
  int exit_code = -1;
  // The signal that ended it, or 0.
  int signal = 0;
  // Whether WaitAll killed it for running past the timeout.
  bool timed_out = false;
};

// Where one rank runs, for groups spread over simulated nodes (network
// namespaces, tools/local_cluster/two_node_network.h).
struct RankPlacement {
  // Words run before the program, e.g. {"/usr/sbin/ip", "netns", "exec",
  // "b"}; the first is an absolute path. They must exec the program in
  // place, as `ip netns exec` does, so that pid(rank) is the rank's own.
  std::vector<std::string> command_prefix;
  // "NAME=value" entries for this rank only, replacing shared and
  // inherited ones of the same name (e.g. GLOO_SOCKET_IFNAME naming its
  // node's interface).
  std::vector<std::string> env;
};

// Where the ranks of a group run; the default is this process's network,
// as torchrun on one machine.
struct GroupPlacement {
  // MASTER_ADDR: where every rank reaches rank 0's store.
  std::string master_addr = "127.0.0.1";
  // One entry per rank, or none: every rank runs as this process does.
  std::vector<RankPlacement> ranks;
};

// Starts one process per rank the way torchrun does (RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR, MASTER_PORT=a free port) and captures
// each one's stdout and stderr. Children die with the test process
// (PR_SET_PDEATHSIG) and the destructor kills and reaps any still running,
// so a failing test never leaves ranks behind.
class RankLauncher {
 public:
  // `extra_env` entries are "NAME=value", for every rank, replacing
  // inherited ones of the same name. INVALID_ARGUMENT
  // when `placement` names ranks but not `world_size` of them.
  static absl::StatusOr<std::unique_ptr<RankLauncher>> Start(
      const std::string& program, const std::vector<std::string>& args,
      int world_size, const std::vector<std::string>& extra_env = {},
      const GroupPlacement& placement = {});
  ~RankLauncher();
  RankLauncher(const RankLauncher&) = delete;
  RankLauncher& operator=(const RankLauncher&) = delete;

  int world_size() const { return static_cast<int>(pids_.size()); }
  int port() const { return port_; }
  // The process of `rank` (the host or worker itself: the dispatch script
  // execs it), for reading its /proc entries.
  pid_t pid(int rank) const { return pids_[rank]; }

  // Everything `rank` wrote so far (stdout and stderr interleaved).
  std::string Output(int rank) const;
  // Polls until Output(rank) contains `text`; false after `timeout`.
  bool WaitForOutput(int rank, const std::string& text,
                     std::chrono::milliseconds timeout) const;
  // SIGKILLs one rank now.
  void Kill(int rank);
  // Starts `rank` again with the same program, arguments and environment,
  // as a supervisor would, once it has exited; its output is appended to
  // what it wrote before. FAILED_PRECONDITION while it still runs.
  absl::Status Restart(int rank);
  // Sends `signal` to one rank (e.g. SIGTERM, as an operator stopping it).
  void Signal(int rank, int signal);
  // Waits at most `timeout` for every rank to exit, then SIGKILLs those
  // still running; one entry per rank.
  std::vector<RankExit> WaitAll(std::chrono::milliseconds timeout);
  // Waits at most `timeout` for one rank to exit (killing it after).
  RankExit Wait(int rank, std::chrono::milliseconds timeout);
  // The ranks that have exited by now, in rank order.
  std::vector<int> Exited();

 private:
  RankLauncher() = default;
  // Reaps `rank` if it exited; true when it has.
  bool Reap(int rank);
  // Starts `rank`'s process; `output_mode` is O_TRUNC or O_APPEND for its
  // output file.
  absl::Status Spawn(int rank, int output_mode);

  std::string program_;
  std::vector<std::string> args_;
  std::vector<std::string> extra_env_;
  GroupPlacement placement_;
  int port_ = 0;
  std::string directory_;
  std::vector<pid_t> pids_;
  std::vector<std::string> output_paths_;
  std::vector<RankExit> exits_;
  std::vector<bool> reaped_;
};

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_RANK_LAUNCHER_H_
