#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_TWO_NODE_NETWORK_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_TWO_NODE_NETWORK_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/local_cluster/delayed_link.h"
#include "tools/local_cluster/rank_launcher.h"
#include "tools/local_cluster/shell_command.h"

namespace ditserve::local_cluster {

// Two "nodes" on one machine: this process's network namespace (node A)
// and a new one (node B), joined by one link with an address at each end,
// so that ranks on different nodes reach each other only across that link,
// through two network stacks, as ranks on two machines do. Made with
// `ip`, which needs CAP_NET_ADMIN; the destructor deletes the namespace and
// the link, also when a test fails. Names and addresses follow from the
// process id and a counter, so that tests running side by side differ.
class TwoNodeNetwork {
 public:
  // A veth pair when `delay` is zero, else a DelayedLink carrying each
  // packet `delay` after it was sent. FAILED_PRECONDITION, naming what
  // failed, when this process may not make a network namespace or a TUN
  // interface (a container without CAP_NET_ADMIN): the caller skips.
  static absl::StatusOr<std::unique_ptr<TwoNodeNetwork>> Create(
      std::chrono::microseconds delay = std::chrono::microseconds(0));
  ~TwoNodeNetwork();
  TwoNodeNetwork(const TwoNodeNetwork&) = delete;
  TwoNodeNetwork& operator=(const TwoNodeNetwork&) = delete;

  // Ranks below `ranks_on_a` on node A, the others on node B; every rank
  // reaches rank 0's store at node A's address and binds Gloo to its
  // node's end of the link.
  GroupPlacement Place(int world_size, int ranks_on_a) const;
  // Takes node A's end of the link down, as a pulled cable (node B's end
  // loses its carrier; neither node loses its address), or up again.
  absl::Status SetLinkUp(bool up);
  // Node A's address on the link, where node B reaches it.
  const std::string& address_a() const { return address_a_; }
  // Runs `command` (a program and its arguments, as /bin/sh reads them) on
  // node B and waits for it.
  ShellResult RunOnNodeB(const std::string& command) const;
  // Kills (SIGKILL) every process running on node B.
  void KillNodeBProcesses() const;
  // Bytes node A's end of the link sent and received so far.
  absl::StatusOr<int64_t> BytesCarried() const;
  // How long a TCP connection attempt from node A to a closed port of node
  // B takes to be refused: one round trip across the link.
  absl::StatusOr<std::chrono::microseconds> RoundTrip() const;

 private:
  TwoNodeNetwork() = default;
  // Runs `ip` with `arguments`; INTERNAL with its output when it fails.
  absl::Status Ip(const std::string& arguments) const;
  // Gives node A and node B their addresses and brings the link up.
  absl::Status Configure();

  std::string ip_;
  std::string namespace_;
  std::string interface_a_;
  std::string interface_b_;
  std::string address_a_;
  std::string address_b_;
  std::unique_ptr<DelayedLink> delayed_link_;
};

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_TWO_NODE_NETWORK_H_
