#ifndef DITSERVE_CORE_TOKENIZERS_TOKENIZED_TEXT_H_
#define DITSERVE_CORE_TOKENIZERS_TOKENIZED_TEXT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace ditserve::tokenizers {

// One text as `tokenizer(text, padding="max_length", max_length=N,
// truncation=True)` returns it: exactly N ids and N mask values.
struct TokenizedText {
  std::vector<int64_t> input_ids;
  std::vector<int64_t> attention_mask;  // 1 for a token, 0 for padding.
};

// `prefix` + the first (max_length - |prefix| - |suffix|) ids of `body` +
// `suffix`, then `pad_id` up to `max_length`: how transformers truncates the
// text's own tokens before adding the special ones. INVALID_ARGUMENT when
// `max_length` cannot hold the special tokens.
absl::StatusOr<TokenizedText> TruncateAndPad(const std::vector<int64_t>& body,
                                             const std::vector<int64_t>& prefix,
                                             const std::vector<int64_t>& suffix,
                                             int max_length, int64_t pad_id);

}  // namespace ditserve::tokenizers

#endif  // DITSERVE_CORE_TOKENIZERS_TOKENIZED_TEXT_H_
