#ifndef DITSERVE_CORE_TOKENIZERS_CLIP_TEXT_CLEANER_H_
#define DITSERVE_CORE_TOKENIZERS_CLIP_TEXT_CLEANER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ditserve::tokenizers {

// What transformers' CLIPTokenizer does to text before its regex when ftfy
// is not installed (the common case, and the golden data's):
// `" ".join(BasicTokenizer(strip_accents=False,
// do_split_on_punc=False).tokenize(text)).lower()`. That is: NUL, U+FFFD and
// every "C*" category character except \t \n \r removed; whitespace made a
// space; CJK ideographs set apart by spaces; NFC; split on Python whitespace;
// Python's full lower-casing; words joined by single spaces.
// `text` must be valid UTF-8; INTERNAL when ICU lacks its NFC data.
absl::StatusOr<std::string> CleanClipText(absl::string_view text);

}  // namespace ditserve::tokenizers

#endif  // DITSERVE_CORE_TOKENIZERS_CLIP_TEXT_CLEANER_H_
