#ifndef DITSERVE_CORE_CHECKPOINTS_CLIP_TOKENIZER_WRITER_H_
#define DITSERVE_CORE_CHECKPOINTS_CLIP_TOKENIZER_WRITER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace ditserve::checkpoints {

// What the CLIP text encoder's config needs to know of its tokenizer.
struct ClipVocabulary {
  int64_t vocab_size = 0;
  int64_t bos_token_id = 0;
  int64_t eos_token_id = 0;
};

// Writes a CLIPTokenizer folder to `dir` (created if needed): vocab.json with
// the 256 byte symbols, the same with "</w>", up to `max_merges` merges
// learned from `corpus`, then <|startoftext|> and <|endoftext|>; merges.txt;
// tokenizer_config.json (model_max_length 77, unk = <|endoftext|>, pad =
// `pad_token`, a token of the vocabulary); special_tokens_map.json. Errors
// name the file.
absl::StatusOr<ClipVocabulary> WriteClipTokenizer(const std::string& corpus,
                                                  int max_merges,
                                                  const std::string& pad_token,
                                                  const std::string& dir);

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_CHECKPOINTS_CLIP_TOKENIZER_WRITER_H_
