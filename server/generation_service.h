#ifndef DITSERVE_SERVER_GENERATION_SERVICE_H_
#define DITSERVE_SERVER_GENERATION_SERVICE_H_

// ditserve.v1.Generation on the gRPC callback API: no thread is blocked per
// request. Each request is frozen here (so bad input is refused before it is
// queued), admitted to the queue, and answered when the scheduler finishes it.

#include <atomic>
#include <string>

#include "absl/random/random.h"
#include "absl/synchronization/mutex.h"
#include "core/config/model_spec.h"
#include "core/config/server_options.h"
#include "ditserve/v1/generation.grpc.pb.h"
#include "server/admission_queue.h"
#include "server/metrics.h"

namespace ditserve::server {

struct ServedModel {
  config::ModelSpec spec;
  std::string model_dir;
  v1::ParallelConfig parallel;
  config::ServerOptions options;
  // Reported by GetServerInfo.
  std::string version;
  std::string torch_version;
  std::string backend;
};

class GenerationService final : public v1::Generation::CallbackService {
 public:
  // Images larger than this go out of GenerateStream in ImageChunk messages.
  static constexpr int64_t kStreamChunkBytes = int64_t{1} << 20;

  GenerationService(ServedModel model, AdmissionQueue* queue, Metrics* metrics);

  grpc::ServerUnaryReactor* Generate(grpc::CallbackServerContext* context,
                                     const v1::GenerateRequest* request,
                                     v1::GenerateResponse* response) override;

  grpc::ServerWriteReactor<v1::GenerateStreamResponse>* GenerateStream(
      grpc::CallbackServerContext* context,
      const v1::GenerateRequest* request) override;

  grpc::ServerUnaryReactor* GetServerInfo(
      grpc::CallbackServerContext* context,
      const v1::GetServerInfoRequest* request,
      v1::ServerInfo* response) override;

 private:
  class UnaryCall;
  class StreamCall;

  // Freezes `request` with a fresh sequence number, request id and seed.
  absl::StatusOr<v1::InputConfig> FreezeRequest(
      const v1::GenerateRequest& request,
      const grpc::CallbackServerContext& context);

  const ServedModel model_;
  AdmissionQueue* const queue_;
  Metrics* const metrics_;
  std::atomic<uint64_t> next_sequence_{1};
  absl::Mutex rng_mu_;
  absl::BitGen rng_ ABSL_GUARDED_BY(rng_mu_);
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_GENERATION_SERVICE_H_
