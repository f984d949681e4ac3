#include "core/tokenizers/byte_level_bpe.h"

#include <array>
#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ditserve::tokenizers {
namespace {

constexpr char kEndOfWord[] = "</w>";

void AppendUtf8(uint32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else {
    // bytes_to_unicode never goes past U+0143: two bytes suffice.
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

// bytes_to_unicode: '!'..'~', '¡'..'¬' and '®'..'ÿ' map to themselves, the
// remaining 68 bytes to U+0100, U+0101, ... in byte order.
const std::array<std::string, 256>& ByteSymbolTable() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> symbols;
    uint32_t next_substitute = 0x100;
    for (uint32_t byte = 0; byte < 256; ++byte) {
      const bool printable = (byte >= '!' && byte <= '~') ||
                             (byte >= 0xA1 && byte <= 0xAC) ||
                             (byte >= 0xAE && byte <= 0xFF);
      AppendUtf8(printable ? byte : next_substitute++, &symbols[byte]);
    }
    return symbols;
  }();
  return table;
}

std::string PairKey(absl::string_view left, absl::string_view right) {
  return absl::StrCat(left, " ", right);
}

}  // namespace

std::string ByteSymbols(absl::string_view bytes) {
  const std::array<std::string, 256>& table = ByteSymbolTable();
  std::string out;
  for (char byte : bytes) out += table[static_cast<uint8_t>(byte)];
  return out;
}

absl::StatusOr<ByteLevelBpe> ByteLevelBpe::FromMergesText(
    absl::string_view merges_text, const std::string& path, int max_merges) {
  // CLIPTokenizer: read().strip().split("\n")[1:max_merges + 1].
  std::vector<absl::string_view> lines =
      absl::StrSplit(absl::StripAsciiWhitespace(merges_text), '\n');
  ByteLevelBpe bpe;
  for (size_t i = 1; i < lines.size() && i <= static_cast<size_t>(max_merges);
       ++i) {
    std::vector<absl::string_view> pair =
        absl::StrSplit(lines[i], absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (pair.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tokenizer file ", path, " line ", i + 1, " \"", lines[i],
          "\" is not a merge of two symbols \"<left> <right>\""));
    }
    // A repeated pair keeps its last rank, as the Python dict does.
    bpe.ranks_[PairKey(pair[0], pair[1])] = static_cast<int>(i - 1);
  }
  return bpe;
}

std::vector<std::string> ByteLevelBpe::Encode(absl::string_view word) const {
  const std::array<std::string, 256>& table = ByteSymbolTable();
  std::vector<std::string> symbols;
  symbols.reserve(word.size());
  for (char byte : word) symbols.push_back(table[static_cast<uint8_t>(byte)]);
  if (symbols.empty()) return symbols;
  symbols.back() += kEndOfWord;

  while (symbols.size() > 1) {
    int best_rank = std::numeric_limits<int>::max();
    size_t best = 0;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      auto it = ranks_.find(PairKey(symbols[i], symbols[i + 1]));
      if (it != ranks_.end() && it->second < best_rank) {
        best_rank = it->second;
        best = i;
      }
    }
    if (best_rank == std::numeric_limits<int>::max()) break;
    const std::string left = symbols[best];
    const std::string right = symbols[best + 1];
    std::vector<std::string> merged;
    merged.reserve(symbols.size());
    for (size_t i = 0; i < symbols.size(); ++i) {
      if (i + 1 < symbols.size() && symbols[i] == left &&
          symbols[i + 1] == right) {
        merged.push_back(left + right);
        ++i;
      } else {
        merged.push_back(symbols[i]);
      }
    }
    symbols = std::move(merged);
  }
  return symbols;
}

}  // namespace ditserve::tokenizers
