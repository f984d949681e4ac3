#ifndef DITSERVE_SERVER_GENERATION_SERVICE_H_
#define DITSERVE_SERVER_GENERATION_SERVICE_H_

// ditserve.v1.Generation on the gRPC callback API: no thread is blocked per
// request. Each request goes through the RequestIntake and is answered when
// the scheduler finishes it.

#include <cstdint>

#include "ditserve/v1/generation.grpc.pb.h"
#include "server/bearer_auth.h"
#include "server/request_intake.h"

namespace ditserve::server {

class GenerationService final : public v1::Generation::CallbackService {
 public:
  // Images larger than this go out of GenerateStream in ImageChunk messages.
  static constexpr int64_t kStreamChunkBytes = int64_t{1} << 20;

  // Every call needs a token when `auth` is enabled.
  GenerationService(RequestIntake* intake, const BearerAuth* auth);

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

  RequestIntake* const intake_;
  const BearerAuth* const auth_;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_GENERATION_SERVICE_H_
