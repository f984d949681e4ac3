#include "core/checkpoints/bpe_merge_trainer.h"

#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "core/tokenizers/byte_level_bpe.h"

namespace ditserve::checkpoints {
namespace {

constexpr char kEndOfWord[] = "</w>";

enum class CharClass { kSpace, kLetter, kDigit, kOther };

CharClass ClassOf(char c) {
  if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
    return CharClass::kSpace;
  }
  if (absl::ascii_isalpha(static_cast<unsigned char>(c))) {
    return CharClass::kLetter;
  }
  if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
    return CharClass::kDigit;
  }
  return CharClass::kOther;
}

// Length of the contraction CLIP's pattern takes as a word at `pos` ("'s",
// "'ll", ...), 0 when none starts there.
size_t ContractionLength(absl::string_view text, size_t pos) {
  for (absl::string_view contraction :
       {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"}) {
    if (text.substr(pos, contraction.size()) == contraction) {
      return contraction.size();
    }
  }
  return 0;
}

// A word's starting symbols: one per byte, "</w>" on the last.
std::vector<std::string> ByteSymbolsOfWord(const std::string& word) {
  std::vector<std::string> symbols;
  for (char byte : word) {
    symbols.push_back(tokenizers::ByteSymbols(std::string(1, byte)));
  }
  symbols.back() += kEndOfWord;
  return symbols;
}

// Replaces every non-overlapping occurrence of `merge`, left to right.
void ApplyMerge(const BpeMerge& merge, std::vector<std::string>& symbols) {
  std::vector<std::string> merged;
  merged.reserve(symbols.size());
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (i + 1 < symbols.size() && symbols[i] == merge.first &&
        symbols[i + 1] == merge.second) {
      merged.push_back(merge.first + merge.second);
      ++i;
    } else {
      merged.push_back(symbols[i]);
    }
  }
  symbols = std::move(merged);
}

}  // namespace

std::vector<std::string> ClipStyleWords(absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(text);
  std::vector<std::string> words;
  size_t i = 0;
  while (i < lower.size()) {
    if (const size_t length = ContractionLength(lower, i); length > 0) {
      words.push_back(lower.substr(i, length));
      i += length;
      continue;
    }
    const CharClass kind = ClassOf(lower[i]);
    size_t end = i + 1;
    // CLIP's pattern takes digits one at a time; letters and other
    // characters in runs.
    if (kind != CharClass::kDigit) {
      while (end < lower.size() && ClassOf(lower[end]) == kind) ++end;
    }
    if (kind != CharClass::kSpace) words.push_back(lower.substr(i, end - i));
    i = end;
  }
  return words;
}

std::vector<BpeMerge> TrainBpeMerges(const std::vector<std::string>& words,
                                     int max_merges) {
  // Ordered maps keep every step independent of hashing.
  std::map<std::string, int64_t> word_counts;
  for (const std::string& word : words) {
    if (!word.empty()) ++word_counts[word];
  }
  std::vector<std::pair<std::vector<std::string>, int64_t>> segmented;
  for (const auto& [word, count] : word_counts) {
    segmented.emplace_back(ByteSymbolsOfWord(word), count);
  }

  std::vector<BpeMerge> merges;
  while (static_cast<int>(merges.size()) < max_merges) {
    std::map<BpeMerge, int64_t> pair_counts;
    for (const auto& [symbols, count] : segmented) {
      for (size_t i = 0; i + 1 < symbols.size(); ++i) {
        pair_counts[{symbols[i], symbols[i + 1]}] += count;
      }
    }
    if (pair_counts.empty()) break;
    // Strictly greater: the first (smallest) pair wins a tie.
    auto best = pair_counts.begin();
    for (auto it = pair_counts.begin(); it != pair_counts.end(); ++it) {
      if (it->second > best->second) best = it;
    }
    merges.push_back(best->first);
    for (auto& [symbols, count] : segmented) ApplyMerge(best->first, symbols);
  }
  return merges;
}

}  // namespace ditserve::checkpoints
