#ifndef DITSERVE_SERVER_LOG_TEXT_H_
#define DITSERVE_SERVER_LOG_TEXT_H_

// Client-supplied text (a model name, a path, a user name) reaches the host
// log inside refusal messages. Written raw, a newline in it forges a log
// line and a megabyte of it floods the log; this makes it one bounded line.

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace ditserve::server {

// The longest text LogText keeps before it cuts; long enough for any
// message the server writes itself.
inline constexpr size_t kMaxLoggedTextBytes = 512;

// `text` with control characters, quotes and non-ASCII bytes C-escaped (so
// a log line stays one line of printable ASCII), cut after
// kMaxLoggedTextBytes input bytes with a note of how many were left out.
std::string LogText(absl::string_view text);

}  // namespace ditserve::server

#endif  // DITSERVE_SERVER_LOG_TEXT_H_
