#include "server/log_text.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace ditserve::server {

std::string LogText(absl::string_view text) {
  if (text.size() <= kMaxLoggedTextBytes) return absl::CHexEscape(text);
  return absl::StrCat(absl::CHexEscape(text.substr(0, kMaxLoggedTextBytes)),
                      "... (", text.size() - kMaxLoggedTextBytes,
                      " more bytes)");
}

}  // namespace ditserve::server
