#ifndef DITSERVE_TOOLS_LOCAL_CLUSTER_RUNNING_STREAM_H_
#define DITSERVE_TOOLS_LOCAL_CLUSTER_RUNNING_STREAM_H_

// A request that holds the group while a test fills the queue behind it.

#include <memory>

#include "ditserve/v1/generation.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "tools/local_cluster/serving_cluster.h"

namespace ditserve::local_cluster {

// A request that keeps the group busy far longer than the tests wait: a step
// over 4096 image tokens takes 1.5 to 1.9 s on 2 cores (ditserve-bench-flux
// on the tiny model), so 200 of them take minutes. At 256×256 a step took
// 14 ms and a faster machine finished all 200 inside a 3 s deadline. Every
// test that starts one cancels it or lets its deadline stop it.
v1::GenerateRequest LongRequest();

struct RunningStream {
  // Cancels the call and reads what is left of the stream, so that the
  // group is free once the host has seen the cancellation at a step.
  void CancelAndDrain();

  std::unique_ptr<grpc::ClientContext> context;
  std::unique_ptr<grpc::ClientReader<v1::GenerateStreamResponse>> reader;
};

// Starts `request` as a stream with a deadline `seconds` from now, and
// returns once its first step finished.
RunningStream StartAndWaitForFirstStep(ServingCluster& cluster,
                                       const v1::GenerateRequest& request,
                                       double seconds);

}  // namespace ditserve::local_cluster

#endif  // DITSERVE_TOOLS_LOCAL_CLUSTER_RUNNING_STREAM_H_
