#include "core/tokenizers/tokenized_text.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ditserve::tokenizers {

absl::StatusOr<TokenizedText> TruncateAndPad(const std::vector<int64_t>& body,
                                             const std::vector<int64_t>& prefix,
                                             const std::vector<int64_t>& suffix,
                                             int max_length, int64_t pad_id) {
  const int64_t special_count =
      static_cast<int64_t>(prefix.size() + suffix.size());
  if (max_length < special_count) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_length ", max_length, " is below the ", special_count,
                     " special tokens every sequence carries"));
  }
  const size_t body_count = std::min<size_t>(
      body.size(), static_cast<size_t>(max_length - special_count));

  TokenizedText out;
  out.input_ids.reserve(max_length);
  out.input_ids.insert(out.input_ids.end(), prefix.begin(), prefix.end());
  out.input_ids.insert(out.input_ids.end(), body.begin(),
                       body.begin() + body_count);
  out.input_ids.insert(out.input_ids.end(), suffix.begin(), suffix.end());
  out.attention_mask.assign(out.input_ids.size(), 1);
  out.input_ids.resize(max_length, pad_id);
  out.attention_mask.resize(max_length, 0);
  return out;
}

}  // namespace ditserve::tokenizers
