#include "tools/local_cluster/running_stream.h"

namespace ditserve::local_cluster {

v1::GenerateRequest LongRequest() {
  v1::GenerateRequest request = SmallRequest("a long one");
  request.set_height(1024);
  request.set_width(1024);
  request.set_num_inference_steps(200);
  return request;
}

void RunningStream::CancelAndDrain() {
  context->TryCancel();
  v1::GenerateStreamResponse message;
  while (reader->Read(&message)) {
  }
}

RunningStream StartAndWaitForFirstStep(ServingCluster& cluster,
                                       const v1::GenerateRequest& request,
                                       double seconds) {
  RunningStream running;
  running.context = ContextWithDeadline(seconds);
  running.reader =
      cluster.generation().GenerateStream(running.context.get(), request);
  v1::GenerateStreamResponse message;
  while (running.reader->Read(&message)) {
    if (message.has_progress()) break;
  }
  return running;
}

}  // namespace ditserve::local_cluster
