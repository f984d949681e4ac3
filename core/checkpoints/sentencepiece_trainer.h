#ifndef DITSERVE_CORE_CHECKPOINTS_SENTENCEPIECE_TRAINER_H_
#define DITSERVE_CORE_CHECKPOINTS_SENTENCEPIECE_TRAINER_H_

#include <string>

#include "absl/status/status.h"

namespace ditserve::checkpoints {

// Trains a unigram SentencePiece model of exactly `vocab_size` pieces on
// `corpus` (one sentence per line) and writes it to `model_path`, with T5's
// special pieces: <pad> 0, </s> 1, <unk> 2, no <s>; nmt_nfkc normalisation,
// every character of the corpus and all printable ASCII kept.
//
// The trainer is SentencePiece's own `spm_train` (Debian package
// sentencepiece) run as a child process: libsentencepiece is not linked into
// ditserve processes (see core/tokenizers/sentencepiece_api.h). Single
// threaded with a fixed random seed and relative paths inside a private
// temporary folder, so the same corpus gives a byte-identical model.
// Errors: NOT_FOUND when spm_train is missing, INVALID_ARGUMENT when the
// corpus is too small for `vocab_size` (the trainer's message says the most
// it allows), DEADLINE_EXCEEDED past a generous timeout.
absl::Status TrainT5SentencePiece(const std::string& corpus, int vocab_size,
                                  const std::string& model_path);

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_CHECKPOINTS_SENTENCEPIECE_TRAINER_H_
