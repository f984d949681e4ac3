#include "core/tokenizers/added_token_splitter.h"

#include <algorithm>

#include "core/base/status_macros.h"
#include "core/base/utf8.h"

namespace ditserve::tokenizers {

AddedTokenSplitter::AddedTokenSplitter(
    const absl::flat_hash_map<std::string, int64_t>& tokens) {
  for (const auto& [content, id] : tokens) {
    if (content.empty()) continue;
    by_first_byte_[content.front()].push_back({content, id});
  }
  for (auto& [first, candidates] : by_first_byte_) {
    std::sort(candidates.begin(), candidates.end(),
              [](const Token& a, const Token& b) {
                return a.content.size() > b.content.size() ||
                       (a.content.size() == b.content.size() &&
                        a.content < b.content);
              });
  }
}

std::vector<TextSegment> AddedTokenSplitter::Split(
    absl::string_view text) const {
  std::vector<TextSegment> segments;
  size_t plain_start = 0;
  size_t i = 0;
  while (i < text.size()) {
    const Token* match = nullptr;
    if (auto it = by_first_byte_.find(text[i]); it != by_first_byte_.end()) {
      for (const Token& candidate : it->second) {
        if (text.substr(i, candidate.content.size()) == candidate.content) {
          match = &candidate;
          break;
        }
      }
    }
    if (match == nullptr) {
      ++i;
      continue;
    }
    if (i > plain_start) {
      segments.push_back({text.substr(plain_start, i - plain_start), {}});
    }
    segments.push_back({text.substr(i, match->content.size()), match->id});
    i += match->content.size();
    plain_start = i;
  }
  if (plain_start < text.size()) {
    segments.push_back({text.substr(plain_start), {}});
  }
  return segments;
}

absl::StatusOr<std::vector<int64_t>> AddedTokenSplitter::Encode(
    absl::string_view text,
    absl::FunctionRef<absl::Status(absl::string_view plain,
                                   std::vector<int64_t>* ids)>
        encode_plain) const {
  RETURN_IF_ERROR(base::CheckUtf8("text to tokenize", text));
  std::vector<int64_t> ids;
  for (const TextSegment& segment : Split(text)) {
    if (segment.added_token_id.has_value()) {
      ids.push_back(*segment.added_token_id);
    } else {
      RETURN_IF_ERROR(encode_plain(segment.text, &ids));
    }
  }
  return ids;
}

}  // namespace ditserve::tokenizers
