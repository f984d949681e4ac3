#include "core/base/utf8.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace ditserve::base {
namespace {

constexpr size_t kMaxShownBytes = 64;

bool ContinuesACharacter(char byte) {
  return (static_cast<uint8_t>(byte) & 0xC0) == 0x80;
}

}  // namespace

std::string Shortened(absl::string_view text) {
  if (text.size() <= kMaxShownBytes) return std::string(text);
  // A character has at most three continuation bytes; in text that is not
  // UTF-8, more are cut through.
  size_t cut = kMaxShownBytes;
  while (cut > kMaxShownBytes - 3 && ContinuesACharacter(text[cut])) --cut;
  return absl::StrCat(text.substr(0, cut), "...");
}

std::optional<size_t> FindInvalidUtf8(absl::string_view text) {
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    const auto lead = static_cast<uint8_t>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    // Allowed ranges of the second byte per lead byte, from the Unicode
    // standard's table of well-formed byte sequences.
    size_t length = 0;
    uint8_t second_min = 0x80;
    uint8_t second_max = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) second_min = 0xA0;
      if (lead == 0xED) second_max = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) second_min = 0x90;
      if (lead == 0xF4) second_max = 0x8F;
    } else {
      return i;
    }
    if (i + length > n) return i;
    const auto second = static_cast<uint8_t>(text[i + 1]);
    if (second < second_min || second > second_max) return i;
    for (size_t k = 2; k < length; ++k) {
      const auto next = static_cast<uint8_t>(text[i + k]);
      if (next < 0x80 || next > 0xBF) return i;
    }
    i += length;
  }
  return std::nullopt;
}

absl::Status CheckUtf8(absl::string_view name, absl::string_view text) {
  const std::optional<size_t> bad = FindInvalidUtf8(text);
  if (!bad.has_value()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(name, " is not valid UTF-8 (first bad byte at ", *bad, ")"));
}

}  // namespace ditserve::base
