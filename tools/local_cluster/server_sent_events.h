#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_SERVER_SENT_EVENTS_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_SERVER_SENT_EVENTS_H_

// The events of an HTTP API stream (text/event-stream) as a client reads
// them.

#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"

namespace ditserve::local_cluster {

// Each event of `stream` as (event type, data JSON), in order; comment
// lines (the keep-alives) are skipped.
std::vector<std::pair<std::string, nlohmann::json>> ParseServerSentEvents(
    const std::string& stream);

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_SERVER_SENT_EVENTS_H_
