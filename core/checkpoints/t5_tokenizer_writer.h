#ifndef DITSERVE_CORE_CHECKPOINTS_T5_TOKENIZER_WRITER_H_
#define DITSERVE_CORE_CHECKPOINTS_T5_TOKENIZER_WRITER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace ditserve::checkpoints {

// What the T5 encoder's config needs to know of its tokenizer.
struct T5Vocabulary {
  // SentencePiece pieces plus the <extra_id_N> sentinels.
  int64_t vocab_size = 0;
  int64_t pad_token_id = 0;
  int64_t eos_token_id = 0;
};

// Writes a T5Tokenizer folder to `dir` (created if needed): spiece.model of
// `piece_count` pieces trained on `corpus` (TrainT5SentencePiece), the 100
// <extra_id_N> sentinels after it (<extra_id_0> last) in
// tokenizer_config.json, special_tokens_map.json and added_tokens.json, as
// transformers' T5Tokenizer.save_pretrained writes them.
absl::StatusOr<T5Vocabulary> WriteT5Tokenizer(const std::string& corpus,
                                              int piece_count,
                                              const std::string& dir);

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_CHECKPOINTS_T5_TOKENIZER_WRITER_H_
