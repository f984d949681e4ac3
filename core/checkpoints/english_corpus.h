#ifndef DITSERVE_CORE_CHECKPOINTS_ENGLISH_CORPUS_H_
#define DITSERVE_CORE_CHECKPOINTS_ENGLISH_CORPUS_H_

#include <string>

namespace ditserve::checkpoints {

// A few thousand lines of image-prompt-like English ("A watercolor of a quiet
// fox that sleeps under the old bridge at dawn, 12 times!"), one sentence
// per line, built from fixed word lists by a fixed pseudo-random sequence:
// the same text on every machine and every call. The tokenizers of the
// random checkpoints are trained on it, so prompts of the same kind split
// into pieces that are words or word parts rather than single characters.
std::string BuiltInEnglishCorpus();

}  // namespace ditserve::checkpoints

#endif  // DITSERVE_CORE_CHECKPOINTS_ENGLISH_CORPUS_H_
