#ifndef DITSERVE_CORE_CHECKPOINTS_BPE_MERGE_TRAINER_H_
#define DITSERVE_CORE_CHECKPOINTS_BPE_MERGE_TRAINER_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace ditserve::checkpoints {

// One learned merge: the left and right symbols, in byte-symbol form
// (core/tokenizers/byte_level_bpe.h), the right one possibly ending "</w>".
using BpeMerge = std::pair<std::string, std::string>;

// The words CLIP's tokenizer would see in `text`, for ASCII text: in the
// lower-cased text, the contractions 's 't 're 've 'm 'll 'd, runs of
// letters, single digits and runs of other non-space characters.
std::vector<std::string> ClipStyleWords(absl::string_view text);

// Classic BPE training (Sennrich et al.) with CLIP's end-of-word marker:
// every word starts as its byte symbols, the last one suffixed "</w>"; each
// round merges the most frequent adjacent pair everywhere (ties go to the
// lexicographically smallest pair, so the result is deterministic). Stops
// after `max_merges` rounds or when no pair is left.
std::vector<BpeMerge> TrainBpeMerges(const std::vector<std::string>& words,
                                     int max_merges);

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_CHECKPOINTS_BPE_MERGE_TRAINER_H_
