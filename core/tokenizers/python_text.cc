#include "core/tokenizers/python_text.h"

#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

namespace ditserve::tokenizers {

bool IsPythonWhitespace(UChar32 c) {
  if (u_charType(c) == U_SPACE_SEPARATOR) return true;
  switch (u_charDirection(c)) {
    case U_WHITE_SPACE_NEUTRAL:
    case U_BLOCK_SEPARATOR:
    case U_SEGMENT_SEPARATOR:
      return true;
    default:
      return false;
  }
}

std::string PythonLowerStrip(absl::string_view text) {
  icu::UnicodeString lowered = icu::UnicodeString::fromUTF8(
      icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  // The root locale's full mapping is Python's str.lower().
  lowered.toLower(icu::Locale::getRoot());
  int32_t begin = 0;
  while (begin < lowered.length() &&
         IsPythonWhitespace(lowered.char32At(begin))) {
    begin = lowered.moveIndex32(begin, 1);
  }
  int32_t end = lowered.length();
  while (end > begin &&
         IsPythonWhitespace(lowered.char32At(lowered.moveIndex32(end, -1)))) {
    end = lowered.moveIndex32(end, -1);
  }
  std::string out;
  lowered.tempSubStringBetween(begin, end).toUTF8String(out);
  return out;
}

}  // namespace ditserve::tokenizers
