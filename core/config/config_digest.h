#ifndef DITSERVE_CORE_CONFIG_CONFIG_DIGEST_H_
#define DITSERVE_CORE_CONFIG_CONFIG_DIGEST_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/message_lite.h"

namespace ditserve::config {

// Serialises with deterministic field order, so equal messages give equal
// bytes in every process.
std::string SerializeDeterministic(
    const google::protobuf::MessageLite& message);

// 64-bit FNV-1a of `bytes`: stable across processes, builds and machines
// (unlike absl::Hash, which is salted per process).
uint64_t StableDigest(absl::string_view bytes);

// StableDigest of the deterministic serialisation.
uint64_t MessageDigest(const google::protobuf::MessageLite& message);

// "0x" followed by 16 lowercase hex digits.
std::string DigestHex(uint64_t digest);

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_CONFIG_DIGEST_H_
