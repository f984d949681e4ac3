#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_STREAMED_GENERATION_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_STREAMED_GENERATION_H_

// One GenerateStream call as a client reads it: the events in order, each
// preview put back together from its slices, and the result.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ditserve/v1/generation.pb.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::local_cluster {

struct StreamedGeneration {
  // The name of each message's event ("accepted", "progress",
  // "partial_image", "image_chunk", "result"), in the order they came.
  std::vector<std::string> events;
  // Every preview whole (offset 0, all of its data), in the order each was
  // completed.
  std::vector<v1::GenerateStreamResponse::PartialImage> partial_images;
  // The result as sent: an image sent in chunks has empty data.
  v1::GenerateResponse result;
};

// Streams `request` with a deadline `seconds` from now. The call's gRPC
// status as an absl::Status when it fails; INTERNAL when a preview's slices
// are out of order, overlap or do not add up to its total_bytes, or the
// stream ends without a result.
absl::StatusOr<StreamedGeneration> StreamGeneration(
    ServingCluster& cluster, const v1::GenerateRequest& request,
    double seconds);

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_STREAMED_GENERATION_H_
