#ifndef DITSERVE_CORE_TOKENIZERS_ADDED_TOKEN_SPLITTER_H_
#define DITSERVE_CORE_TOKENIZERS_ADDED_TOKEN_SPLITTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ditserve::tokenizers {

// A run of plain text, or one added token written literally in the text.
struct TextSegment {
  absl::string_view text;
  std::optional<int64_t> added_token_id;  // Set for an added token.
};

// Cuts text around literal occurrences of added tokens (`</s>`,
// `<extra_id_0>`, `<|endoftext|>`, ...), leftmost first and longest at a
// position, as transformers' Trie.split and the Rust AddedVocabulary do for
// tokens without lstrip/rstrip. Plain runs keep their spaces; empty runs are
// dropped.
class AddedTokenSplitter {
 public:
  explicit AddedTokenSplitter(
      const absl::flat_hash_map<std::string, int64_t>& tokens);

  std::vector<TextSegment> Split(absl::string_view text) const;

  // The ids of `text` in order: each added token's own id, and what
  // `encode_plain` appends for each plain run. INVALID_ARGUMENT, before any
  // run is encoded, when `text` is not valid UTF-8: neither tokenizer library
  // defines what ill-formed text becomes.
  absl::StatusOr<std::vector<int64_t>> Encode(
      absl::string_view text,
      absl::FunctionRef<absl::Status(absl::string_view plain,
                                     std::vector<int64_t>* ids)>
          encode_plain) const;

 private:
  struct Token {
    std::string content;
    int64_t id;
  };
  // Candidates by first byte, longest first.
  absl::flat_hash_map<char, std::vector<Token>> by_first_byte_;
};

}  // namespace ditserve::tokenizers

#endif  // DITSERVE_CORE_TOKENIZERS_ADDED_TOKEN_SPLITTER_H_
