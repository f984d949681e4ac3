#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_QUEUE_DEPTH_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_QUEUE_DEPTH_H_

// Tests that fill the host's queue wait on its own gauge rather than sleep:
// a request counts as queued only once the host has admitted it.

#include <chrono>

#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::local_cluster {

// Polls ditserve_queue_depth until it reads `depth`; false after `limit`.
bool WaitForQueueDepth(const ServingCluster& cluster, int depth,
                       std::chrono::milliseconds limit);

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_QUEUE_DEPTH_H_
