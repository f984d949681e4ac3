#ifndef DITSERVE_CORE_DIST_CONTROL_FRAME_H_
#define DITSERVE_CORE_DIST_CONTROL_FRAME_H_

// Decoding of the frames ControlChannel broadcasts: an int64 header {kind,
// length}, then `length` bytes, the serialised body named by `kind`. Pure
// functions of the received values, apart from the collectives, so the
// decoding is tested (and fuzzed) on bytes alone.

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "ditserve/v1/control.pb.h"

namespace ditserve::dist {

// One control message as this rank parsed it.
struct ControlMessage {
  v1::ControlKind kind = v1::CONTROL_KIND_UNSPECIFIED;
  // The body named by `kind`; the others stay empty.
  v1::RunConfig run;
  v1::Ping ping;
  v1::Shutdown shutdown;
  // The bytes rank 0 broadcast.
  std::string payload;
  // config::MessageDigest of the body as this rank parsed it.
  uint64_t digest = 0;
  // OK when every rank parsed a body with rank 0's digest; otherwise
  // INTERNAL naming the differing ranks and digests, identical on every
  // rank. The group stays usable either way.
  absl::Status agreement;
};

// Digest every rank reports for a payload it could not parse; no real
// message digests to it in practice, and it never equals rank 0's, which
// parses what it serialised itself.
inline constexpr uint64_t kUnparsedDigest = 0;

// Run, Ping or Shutdown.
bool IsKnownControlKind(int64_t kind);

// "RunConfig", "Ping", "Shutdown" (or the number of an unknown kind).
std::string ControlKindName(v1::ControlKind kind);

// The body named by message.kind (Shutdown for an unknown kind).
const google::protobuf::MessageLite& ControlBody(const ControlMessage& message);

// OK for a header naming a known kind and a length in
// 0..max_message_bytes; otherwise INTERNAL naming both.
absl::Status CheckControlFrameHeader(int64_t kind, int64_t length,
                                     int64_t max_message_bytes);

// The message of a checked header: `payload` parsed into the body of `kind`
// and digested. A payload that does not parse keeps kUnparsedDigest, which
// the digest agreement reports, rather than failing this rank alone.
// `alter_parsed_run_config` (test-only fault injection, may be empty) sees a
// parsed RunConfig before its digest is computed.
ControlMessage DecodeControlPayload(
    v1::ControlKind kind, std::string payload,
    const std::function<void(v1::RunConfig&)>& alter_parsed_run_config);

}  // namespace ditserve::dist

#endif  // DITSERVE_CORE_DIST_CONTROL_FRAME_H_
