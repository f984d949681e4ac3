#ifndef DITSERVE_CORE_TOKENIZERS_BYTE_LEVEL_BPE_H_
#define DITSERVE_CORE_TOKENIZERS_BYTE_LEVEL_BPE_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ditserve::tokenizers {

// The printable stand-in of every byte (GPT-2 / CLIP `bytes_to_unicode`),
// UTF-8 encoded: printable Latin-1 bytes stand for themselves, the others
// for U+0100 onwards, so a vocabulary entry never holds a space or control.
std::string ByteSymbols(absl::string_view bytes);

// Byte-level BPE with CLIP's end-of-word marker: a word's bytes become
// symbols, the last one suffixed with "</w>", then the adjacent pair with the
// lowest merge rank is merged everywhere, left to right, until no pair has a
// rank (openai/CLIP simple_tokenizer.bpe, transformers CLIPTokenizer.bpe).
class ByteLevelBpe {
 public:
  // `merges_text` is merges.txt: a "#version" header line, then one
  // "left right" pair per line in rank order. At most `max_merges` lines are
  // used (CLIPTokenizer reads 49152 - 256 - 2). Errors name `path`.
  static absl::StatusOr<ByteLevelBpe> FromMergesText(
      absl::string_view merges_text, const std::string& path, int max_merges);

  // The symbols of one pre-tokenised word (raw UTF-8 bytes, non-empty).
  std::vector<std::string> Encode(absl::string_view word) const;

 private:
  // Rank by "left right" (symbols never contain a space).
  absl::flat_hash_map<std::string, int> ranks_;
};

}  // namespace ditserve::tokenizers

#endif  // DITSERVE_CORE_TOKENIZERS_BYTE_LEVEL_BPE_H_
