#include "core/tokenizers/clip_text_cleaner.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/tokenizers/python_text.h"

namespace ditserve::tokenizers {
namespace {

// BasicTokenizer._is_control: any "C*" category except \t, \n and \r.
bool IsControl(UChar32 c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  switch (u_charType(c)) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_UNASSIGNED:
    case U_PRIVATE_USE_CHAR:
    case U_SURROGATE:
      return true;
    default:
      return false;
  }
}

// BasicTokenizer._is_whitespace: space, \t, \n, \r or category Zs.
bool IsBasicWhitespace(UChar32 c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
         u_charType(c) == U_SPACE_SEPARATOR;
}

// BasicTokenizer._is_chinese_char: the CJK Unified Ideographs blocks.
bool IsCjkIdeograph(UChar32 c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// _clean_text then _tokenize_chinese_chars.
icu::UnicodeString RemoveControlsAndSpaceOutCjk(const icu::UnicodeString& in) {
  icu::UnicodeString out;
  for (int32_t i = 0; i < in.length(); i = in.moveIndex32(i, 1)) {
    const UChar32 c = in.char32At(i);
    if (c == 0 || c == 0xFFFD || IsControl(c)) continue;
    if (IsBasicWhitespace(c)) {
      out.append(static_cast<UChar>(' '));
    } else if (IsCjkIdeograph(c)) {
      out.append(static_cast<UChar>(' '))
          .append(c)
          .append(static_cast<UChar>(' '));
    } else {
      out.append(c);
    }
  }
  return out;
}

std::vector<icu::UnicodeString> SplitOnPythonWhitespace(
    const icu::UnicodeString& text) {
  std::vector<icu::UnicodeString> words;
  icu::UnicodeString word;
  for (int32_t i = 0; i < text.length(); i = text.moveIndex32(i, 1)) {
    const UChar32 c = text.char32At(i);
    if (IsPythonWhitespace(c)) {
      if (!word.isEmpty()) words.push_back(word);
      word.remove();
    } else {
      word.append(c);
    }
  }
  if (!word.isEmpty()) words.push_back(word);
  return words;
}

}  // namespace

absl::StatusOr<std::string> CleanClipText(absl::string_view text) {
  icu::UnicodeString cleaned =
      RemoveControlsAndSpaceOutCjk(icu::UnicodeString::fromUTF8(
          icu::StringPiece(text.data(), static_cast<int32_t>(text.size()))));

  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
  icu::UnicodeString normalized;
  if (U_SUCCESS(status)) normalized = nfc->normalize(cleaned, status);
  if (U_FAILURE(status)) {
    return absl::InternalError(
        absl::StrCat("ICU cannot NFC-normalise text for the CLIP tokenizer: ",
                     u_errorName(status)));
  }

  std::string out;
  for (icu::UnicodeString& word : SplitOnPythonWhitespace(normalized)) {
    // The root locale's full mapping (final sigma, U+0130) is Python's
    // str.lower().
    word.toLower(icu::Locale::getRoot());
    if (!out.empty()) out.push_back(' ');
    word.toUTF8String(out);
  }
  return out;
}

}  // namespace ditserve::tokenizers
