#ifndef DITSERVE_SERVER_GENERATION_SERVICE_H_
#define DITSERVE_SERVER_GENERATION_SERVICE_H_

// ditserve.v1.Generation on the gRPC callback API: no thread is blocked per
// request. Each request goes through the RequestIntake and is answered when
// the scheduler finishes it. The methods take raw bytes, parsed by
// ParseRequest, so that a request that does not parse gets INVALID_ARGUMENT
// naming what failed rather than gRPC's bare UNIMPLEMENTED.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ditserve/v1/generation.grpc.pb.h"
#include "server/bearer_auth.h"
#include "server/request_intake.h"

namespace ditserve::server {

class GenerationService final
    : public v1::Generation::WithRawCallbackMethod_Generate<
          v1::Generation::WithRawCallbackMethod_GenerateStream<
              v1::Generation::WithRawCallbackMethod_GetServerInfo<
                  v1::Generation::Service>>> {
 public:
  // GenerateStream's `result` holds at most this much output data, and
  // ImageChunk messages at most this much each.
  static constexpr int64_t kStreamChunkBytes = int64_t{1} << 20;
  // The largest message the server sends: a Generate response, with every
  // output in it. Generate refuses raw outputs (RGB8, float32 latents)
  // whose bytes are known to exceed it before running them, and answers
  // encoded ones that exceed it RESOURCE_EXHAUSTED naming GenerateStream.
  static constexpr int kMaxMessageBytes = 256 << 20;

  // Every call needs a token when `auth` is enabled. A GenerateStream
  // message that its client has not taken within `stream_write_timeout`
  // (--stream_write_timeout_s) cancels the call: the messages behind it, all
  // of a finished job's outputs, would otherwise stay in the host's memory
  // until the call's deadline, and for ever without one.
  GenerationService(RequestIntake* intake, const BearerAuth* auth,
                    absl::Duration stream_write_timeout);

  // GenerateRequest in, GenerateResponse out.
  grpc::ServerUnaryReactor* Generate(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;

  // GenerateRequest in, GenerateStreamResponse messages out.
  grpc::ServerWriteReactor<grpc::ByteBuffer>* GenerateStream(
      grpc::CallbackServerContext* context,
      const grpc::ByteBuffer* request) override;

  // GetServerInfoRequest in, ServerInfo out.
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* context,
                                          const grpc::ByteBuffer* request,
                                          grpc::ByteBuffer* response) override;

 private:
  class UnaryCall;
  class StreamCall;

  // The config `request` freezes to, or why it does not: the call's
  // credentials first (`client`, BearerAuth::AuthenticateCall), then the
  // bytes, then the fields. A refusal that no retry can change also tells
  // gRPC's retry policies not to retry (trailing metadata of `context`).
  absl::StatusOr<v1::InputConfig> FreezeCall(
      grpc::CallbackServerContext& context,
      const absl::StatusOr<std::string>& client,
      const absl::StatusOr<v1::GenerateRequest>& request) const;

  RequestIntake* const intake_;
  const BearerAuth* const auth_;
  const absl::Duration stream_write_timeout_;
};

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_GENERATION_SERVICE_H_
