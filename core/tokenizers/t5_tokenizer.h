#ifndef DITSERVE_CORE_TOKENIZERS_T5_TOKENIZER_H_
#define DITSERVE_CORE_TOKENIZERS_T5_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tokenizers/added_token_splitter.h"
#include "core/tokenizers/sentencepiece_model.h"
#include "core/tokenizers/tokenized_text.h"

namespace ditserve::tokenizers {

// The T5 tokenizer of FLUX / SD3 / PixArt checkpoints, with the ids of
// transformers' T5TokenizerFast (legacy): added tokens written in the text
// (`</s>`, `<pad>`, `<unk>`, `<extra_id_N>`) are cut out first, every other
// run goes through the SentencePiece model as is, then `</s>` is appended.
// Encoding is const and keeps no cache, so one instance serves all threads.
class T5Tokenizer {
 public:
  // Reads `dir`/spiece.model and, when present, `dir`/tokenizer_config.json
  // (its added tokens; without it the SentencePiece specials and 100
  // `<extra_id_N>` sentinels, transformers' default). Errors name the file.
  static absl::StatusOr<T5Tokenizer> Load(const std::string& dir);

  // Ids of `text` followed by `</s>`, neither truncated nor padded.
  // INVALID_ARGUMENT when `text` is not valid UTF-8.
  absl::StatusOr<std::vector<int64_t>> Encode(absl::string_view text) const;

  // `tokenizer(text, padding="max_length", max_length=max_length,
  // truncation=True)`: at most max_length - 1 text ids, `</s>`, then padding.
  absl::StatusOr<TokenizedText> EncodePadded(absl::string_view text,
                                             int max_length) const;

  int64_t eos_token_id() const { return eos_id_; }
  int64_t pad_token_id() const { return pad_id_; }

 private:
  T5Tokenizer(std::unique_ptr<SentencePieceModel> model,
              AddedTokenSplitter splitter, int64_t eos_id, int64_t pad_id);

  // Ids of `text` without `</s>`.
  absl::StatusOr<std::vector<int64_t>> EncodeText(absl::string_view text) const;

  std::unique_ptr<SentencePieceModel> model_;
  AddedTokenSplitter splitter_;
  int64_t eos_id_;
  int64_t pad_id_;
};

}  // namespace ditserve::tokenizers

#endif  // DITSERVE_CORE_TOKENIZERS_T5_TOKENIZER_H_
