#include "core/config/config_digest.h"

#include "absl/strings/str_format.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace ditserve::config {

std::string SerializeDeterministic(
    const google::protobuf::MessageLite& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream raw(&bytes);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

uint64_t StableDigest(absl::string_view bytes) {
  constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ULL;
  constexpr uint64_t kPrime = 0x100000001b3ULL;
  uint64_t hash = kOffsetBasis;
  for (const char c : bytes) {
    hash ^= static_cast<uint8_t>(c);
    hash *= kPrime;
  }
  return hash;
}

uint64_t MessageDigest(const google::protobuf::MessageLite& message) {
  return StableDigest(SerializeDeterministic(message));
}

std::string DigestHex(uint64_t digest) {
  return absl::StrFormat("0x%016x", digest);
}

}  // namespace ditserve::config
