#ifndef DITSERVE_CORE_TOKENIZERS_PYTHON_TEXT_H_
#define DITSERVE_CORE_TOKENIZERS_PYTHON_TEXT_H_

// Python's str methods that pipelines and tokenizers apply to prompts, for
// the text to reach a tokenizer as it does in Python.

#include <unicode/umachine.h>

#include <string>

#include "absl/strings/string_view.h"

namespace ditserve::tokenizers {

// Python's str.isspace(), which str.split() and str.strip() go by: category
// Zs or bidirectional class WS, B or S.
bool IsPythonWhitespace(UChar32 c);

// Python's text.lower().strip() on UTF-8 `text`: the full lower-casing
// (final sigma, U+0130 to "i" + U+0307), then Python's whitespace cut from
// both ends.
std::string PythonLowerStrip(absl::string_view text);

}  // namespace ditserve::tokenizers

#endif  // DITSERVE_CORE_TOKENIZERS_PYTHON_TEXT_H_
