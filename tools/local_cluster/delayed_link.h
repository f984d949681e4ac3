#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_DELAYED_LINK_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_DELAYED_LINK_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace ditserve::local_cluster {

// A point-to-point link between two TUN interfaces: one thread per
// direction reads each IP packet sent into one end and hands it to the
// other end `delay` after it was sent, in order and, while both ends are
// up, without loss. It adds one-way latency where the kernel has no
// sch_netem for `tc qdisc ... netem delay`; unlike netem it neither drops,
// reorders nor jitters. Both ends are made in this process's network
// namespace (move one with `ip link set NAME netns NS`) and vanish with the
// object, which holds their only file descriptors.
class DelayedLink {
 public:
  // FAILED_PRECONDITION when /dev/net/tun cannot be opened here.
  static absl::StatusOr<std::unique_ptr<DelayedLink>> Create(
      const std::string& name_a, const std::string& name_b,
      std::chrono::microseconds delay);
  ~DelayedLink();
  DelayedLink(const DelayedLink&) = delete;
  DelayedLink& operator=(const DelayedLink&) = delete;

 private:
  DelayedLink(int end_a, int end_b, std::chrono::microseconds delay);
  // Moves packets from `from` to `to` until `stop_`.
  void Carry(int from, int to);

  const int end_a_;
  const int end_b_;
  const std::chrono::microseconds delay_;
  std::atomic<bool> stop_{false};
  std::thread a_to_b_;
  std::thread b_to_a_;
};

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_DELAYED_LINK_H_
