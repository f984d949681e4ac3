#ifndef DITSERVE_CORE_TOKENIZERS_CLIP_TOKENIZER_H_
#define DITSERVE_CORE_TOKENIZERS_CLIP_TOKENIZER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tokenizers/added_token_splitter.h"
#include "core/tokenizers/byte_level_bpe.h"
#include "core/tokenizers/tokenized_text.h"

namespace ditserve::tokenizers {

// What `CLIPTokenizer.from_pretrained(dir, **kwargs)` may override.
struct CLIPTokenizerOptions {
  // Replaces tokenizer_config.json's pad_token (SD3 pads its CLIP-G with "!").
  std::optional<std::string> pad_token;
};

// The CLIP tokenizer of FLUX / SD3 checkpoints, with the ids of
// transformers' (slow) CLIPTokenizer: special tokens written in the text are
// cut out first; every other run is cleaned and lower-cased (CleanClipText),
// split by CLIP's word regex (Unicode letter and number classes) and
// byte-level BPE encoded; then `<|startoftext|>` ... `<|endoftext|>`.
// Encoding is const and keeps no cache, so one instance serves all threads.
class CLIPTokenizer {
 public:
  // Reads `dir`/vocab.json, `dir`/merges.txt and, when present,
  // `dir`/tokenizer_config.json (special tokens, e.g. SD3's CLIP-G pads with
  // "!"; model_max_length). Errors name the file.
  static absl::StatusOr<CLIPTokenizer> Load(
      const std::string& dir, const CLIPTokenizerOptions& options = {});

  // BOS, the ids of `text`, EOS; neither truncated nor padded.
  // INVALID_ARGUMENT when `text` is not valid UTF-8.
  absl::StatusOr<std::vector<int64_t>> Encode(absl::string_view text) const;

  // `tokenizer(text, padding="max_length", max_length=max_length,
  // truncation=True)`: BOS, at most max_length - 2 text ids, EOS, padding.
  absl::StatusOr<TokenizedText> EncodePadded(absl::string_view text,
                                             int max_length) const;

  int64_t bos_token_id() const { return bos_id_; }
  int64_t eos_token_id() const { return eos_id_; }
  int64_t pad_token_id() const { return pad_id_; }
  // tokenizer_config.json's model_max_length (77 for every CLIP).
  int model_max_length() const { return model_max_length_; }

 private:
  CLIPTokenizer() = default;

  // Ids of `text` without BOS / EOS.
  absl::StatusOr<std::vector<int64_t>> EncodeText(absl::string_view text) const;
  int64_t TokenId(const std::string& token) const;

  absl::flat_hash_map<std::string, int64_t> vocab_;
  ByteLevelBpe bpe_;
  AddedTokenSplitter splitter_{{}};
  int64_t bos_id_ = 0;
  int64_t eos_id_ = 0;
  int64_t pad_id_ = 0;
  int64_t unk_id_ = 0;
  int model_max_length_ = 0;
};

}  // namespace ditserve::tokenizers

#endif  // DITSERVE_CORE_TOKENIZERS_CLIP_TOKENIZER_H_
