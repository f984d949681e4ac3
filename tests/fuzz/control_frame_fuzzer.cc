// The control-channel frame decoding of every worker rank on arbitrary
// bytes: a 16-byte header {kind, length} (int64, little-endian, as the
// header tensor travels) and the payload after it, cut to the announced
// length. Beyond not crashing, a payload that parses must keep its digest
// through rank 0's deterministic re-serialisation, which is what the digest
// agreement of all ranks relies on.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "core/config/config_digest.h"
#include "core/dist/control_frame.h"
#include "ditserve/v1/control.pb.h"
#include "google/protobuf/stubs/logging.h"
#include "tests/fuzz/fuzz_check.h"

namespace ditserve {
namespace {

// ControlChannelOptions' default.
constexpr int64_t kMaxMessageBytes = int64_t{64} << 20;

void FuzzOne(const uint8_t* data, size_t size) {
  int64_t header[2];
  if (size < sizeof(header)) return;
  std::memcpy(header, data, sizeof(header));
  const int64_t kind = header[0];
  const int64_t length = header[1];
  if (!dist::CheckControlFrameHeader(kind, length, kMaxMessageBytes).ok()) {
    return;
  }
  const size_t available = size - sizeof(header);
  const std::string payload(
      reinterpret_cast<const char*>(data) + sizeof(header),
      static_cast<size_t>(length) < available ? static_cast<size_t>(length)
                                              : available);
  const auto control_kind = static_cast<v1::ControlKind>(kind);
  const dist::ControlMessage message =
      dist::DecodeControlPayload(control_kind, payload, {});
  FUZZ_CHECK(message.kind == control_kind && message.payload == payload,
             "the message does not keep the frame's kind and bytes");
  if (message.digest == dist::kUnparsedDigest) return;

  const std::string resent =
      config::SerializeDeterministic(dist::ControlBody(message));
  const dist::ControlMessage reparsed =
      dist::DecodeControlPayload(control_kind, resent, {});
  FUZZ_CHECK(reparsed.digest == message.digest,
             "%s digest %s, after re-serialisation %s",
             dist::ControlKindName(control_kind).c_str(),
             config::DigestHex(message.digest).c_str(),
             config::DigestHex(reparsed.digest).c_str());
}

}  // namespace
}  // namespace ditserve

// protobuf logs each string field with invalid UTF-8 that it refuses; at
// fuzzing rates that would be most of the output and of the time.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ditserve::FuzzOne(data, size);
  return 0;
}
