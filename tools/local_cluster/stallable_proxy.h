#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_STALLABLE_PROXY_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_STALLABLE_PROXY_H_

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ditserve::local_cluster {

// A TCP relay on loopback between clients and a server's port that can
// stop relaying without closing anything, as a client whose machine froze
// or whose network path went dark behaves: its connections stay open and
// what the server sends is no longer read or answered. One thread accepts,
// two relay each connection; the destructor closes them all.
class StallableProxy {
 public:
  // Listens on a free loopback port and relays each connection to
  // `server_port`. UNAVAILABLE when it cannot listen.
  static absl::StatusOr<std::unique_ptr<StallableProxy>> Start(int server_port);
  ~StallableProxy();
  StallableProxy(const StallableProxy&) = delete;
  StallableProxy& operator=(const StallableProxy&) = delete;

  int port() const { return port_; }
  // From now on nothing is read from either side of any connection, and
  // new connections (which the kernel still completes) are not relayed.
  void Stall() { stalled_ = true; }

 private:
  StallableProxy(int listener, int port, int server_port);
  void Accept();
  // Copies what `from` receives to `to` until either closes or stop_.
  void Copy(int from, int to);

  const int listener_;
  const int port_;
  const int server_port_;
  std::atomic<bool> stalled_{false};
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  std::vector<int> sockets_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> copiers_ ABSL_GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_STALLABLE_PROXY_H_
