#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_HTTP_GET_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_HTTP_GET_H_

#include <string>

#include "absl/status/statusor.h"

namespace ditserve::local_cluster {

// The body of `GET path` from 127.0.0.1:port (10 s timeouts);
// an error unless the status is 200.
absl::StatusOr<std::string> HttpGet(int port, const std::string& path);

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_HTTP_GET_H_
