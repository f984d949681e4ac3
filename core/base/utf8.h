#ifndef DITSERVE_CORE_BASE_UTF8_H_
#define DITSERVE_CORE_BASE_UTF8_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ditserve::base {

// Byte offset of the first byte that does not start or continue a well-formed
// UTF-8 sequence (overlong forms, surrogates and code points above U+10FFFF
// are ill-formed), or nullopt when `text` is valid UTF-8.
std::optional<size_t> FindInvalidUtf8(absl::string_view text);

// OK for valid UTF-8; otherwise INVALID_ARGUMENT "`name` is not valid UTF-8
// (first bad byte at N)", the one wording every refusal of text uses.
absl::Status CheckUtf8(absl::string_view name, absl::string_view text);

// Client text as an error message quotes it: whole up to 64 bytes, else its
// first 64 at most, cut where a character starts, and "...". A long value
// cannot swell the message, which gRPC repeats in its trailers.
std::string Shortened(absl::string_view text);

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_UTF8_H_
