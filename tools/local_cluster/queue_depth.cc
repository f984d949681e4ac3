#include "tools/local_cluster/queue_depth.h"

#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace ditserve::local_cluster {

bool WaitForQueueDepth(const ServingCluster& cluster, int depth,
                       std::chrono::milliseconds limit) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (true) {
    absl::StatusOr<std::string> metrics = cluster.ScrapeMetrics();
    if (metrics.ok() && MetricValue(*metrics, "ditserve_queue_depth", {}) ==
                            static_cast<double>(depth)) {
      return true;
    }
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace ditserve::local_cluster
