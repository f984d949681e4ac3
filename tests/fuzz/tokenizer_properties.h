#ifndef DITSERVE_TESTS_FUZZ_TOKENIZER_PROPERTIES_H_
#define DITSERVE_TESTS_FUZZ_TOKENIZER_PROPERTIES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/base/utf8.h"
#include "core/tokenizers/tokenized_text.h"
#include "tests/fuzz/fuzz_check.h"

namespace ditserve::fuzz {

// What T5Tokenizer and CLIPTokenizer both promise for any `text`: valid
// UTF-8 encodes (ending in the end-of-text id), anything else is
// INVALID_ARGUMENT; padded encoding is exactly `max_length` ids whose
// unmasked ones are Encode's, truncated before its last id, then that id.
template <typename Tokenizer>
void CheckTokenizer(const Tokenizer& tokenizer, absl::string_view text,
                    int max_length) {
  const bool valid = !base::FindInvalidUtf8(text).has_value();
  absl::StatusOr<std::vector<int64_t>> ids = tokenizer.Encode(text);
  absl::StatusOr<tokenizers::TokenizedText> padded =
      tokenizer.EncodePadded(text, max_length);
  if (!valid) {
    FUZZ_CHECK(!ids.ok() && !padded.ok() &&
                   ids.status().code() == absl::StatusCode::kInvalidArgument &&
                   padded.status().code() == absl::StatusCode::kInvalidArgument,
               "invalid UTF-8 was not refused as INVALID_ARGUMENT");
    return;
  }
  FUZZ_CHECK(ids.ok(), "%s", ids.status().ToString().c_str());
  FUZZ_CHECK(padded.ok(), "%s", padded.status().ToString().c_str());
  FUZZ_CHECK(!ids->empty() && ids->back() == tokenizer.eos_token_id(),
             "Encode does not end with the end-of-text id");
  const size_t length = static_cast<size_t>(max_length);
  FUZZ_CHECK(padded->input_ids.size() == length &&
                 padded->attention_mask.size() == length,
             "padded to %zu ids and %zu mask values, not %d",
             padded->input_ids.size(), padded->attention_mask.size(),
             max_length);
  const size_t kept = std::min(ids->size(), length);
  for (size_t i = 0; i < length; ++i) {
    const int64_t expected_id = i + 1 < kept    ? (*ids)[i]
                                : i + 1 == kept ? ids->back()
                                                : tokenizer.pad_token_id();
    FUZZ_CHECK(padded->input_ids[i] == expected_id &&
                   padded->attention_mask[i] == (i < kept ? 1 : 0),
               "padded position %zu: id %lld mask %lld, expected id %lld", i,
               static_cast<long long>(padded->input_ids[i]),
               static_cast<long long>(padded->attention_mask[i]),
               static_cast<long long>(expected_id));
  }
}

// One fuzz input for `Tokenizer` (T5Tokenizer or CLIPTokenizer), loaded once
// from the golden tokenizer folder `path`.
template <typename Tokenizer>
void FuzzTokenizer(const char* path, int max_length, const uint8_t* data,
                   size_t size) {
  static const Tokenizer* tokenizer = [path] {
    absl::StatusOr<Tokenizer> loaded = Tokenizer::Load(path);
    FUZZ_CHECK(loaded.ok(), "%s", loaded.status().ToString().c_str());
    return new Tokenizer(*std::move(loaded));
  }();
  CheckTokenizer(*tokenizer,
                 absl::string_view(reinterpret_cast<const char*>(data), size),
                 max_length);
}

}  // namespace ditserve::fuzz

#endif  // DITSERVE_TESTS_FUZZ_TOKENIZER_PROPERTIES_H_
