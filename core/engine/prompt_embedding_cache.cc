#include "core/engine/prompt_embedding_cache.h"

#include <ATen/core/Tensor.h>
#include <ATen/ops/cat.h>

#include <optional>
#include <utility>

#include "core/base/status_macros.h"

namespace ditserve::engine {
namespace {

using families::Conditioning;

at::Tensor RowCopy(const at::Tensor& batch, int64_t row) {
  // A copy, so that a kept row does not hold its whole batch's storage.
  return batch.defined() ? batch.narrow(0, row, 1).clone() : at::Tensor();
}

Conditioning RowOf(const Conditioning& batch, int64_t row) {
  Conditioning copy{.states = RowCopy(batch.states, row),
                    .pooled = RowCopy(batch.pooled, row),
                    .mask = RowCopy(batch.mask, row)};
  for (const auto& [name, ids] : batch.token_ids) {
    copy.token_ids.emplace_back(name, RowCopy(ids, row));
  }
  return copy;
}

int64_t BytesOf(const Conditioning& row) {
  int64_t bytes = 0;
  for (const at::Tensor* tensor : {&row.states, &row.pooled, &row.mask}) {
    if (tensor->defined()) bytes += static_cast<int64_t>(tensor->nbytes());
  }
  for (const auto& [name, ids] : row.token_ids) {
    bytes += static_cast<int64_t>(ids.nbytes());
  }
  return bytes;
}

at::Tensor Stack(const std::vector<Conditioning>& rows,
                 at::Tensor Conditioning::*field) {
  if (!(rows.front().*field).defined()) return at::Tensor();
  std::vector<at::Tensor> parts;
  parts.reserve(rows.size());
  for (const Conditioning& row : rows) parts.push_back(row.*field);
  return at::cat(parts, /*dim=*/0);
}

Conditioning StackRows(const std::vector<Conditioning>& rows) {
  Conditioning batch{.states = Stack(rows, &Conditioning::states),
                     .pooled = Stack(rows, &Conditioning::pooled),
                     .mask = Stack(rows, &Conditioning::mask)};
  for (size_t name = 0; name < rows.front().token_ids.size(); ++name) {
    std::vector<at::Tensor> parts;
    parts.reserve(rows.size());
    for (const Conditioning& row : rows) {
      parts.push_back(row.token_ids[name].second);
    }
    batch.token_ids.emplace_back(rows.front().token_ids[name].first,
                                 at::cat(parts, /*dim=*/0));
  }
  return batch;
}

}  // namespace

PromptEmbeddingCache::PromptEmbeddingCache(int64_t capacity_bytes)
    : capacity_bytes_(capacity_bytes) {}

absl::StatusOr<Conditioning> PromptEmbeddingCache::Encode(
    const std::vector<std::string>& prompts, int max_sequence_length,
    const Encoder& encode) {
  const auto count = static_cast<int64_t>(prompts.size());
  if (prompts.empty()) return encode(prompts);
  std::vector<std::optional<Conditioning>> rows(prompts.size());
  std::vector<std::string> missing;
  // Position in `missing` of each prompt to encode.
  absl::flat_hash_map<std::string, int64_t> missing_row;
  {
    absl::MutexLock lock(&mutex_);
    for (size_t i = 0; i < prompts.size(); ++i) {
      auto found = index_.find(Key(max_sequence_length, prompts[i]));
      if (found != index_.end()) {
        entries_.splice(entries_.begin(), entries_, found->second);
        rows[i] = found->second->row;
      } else if (missing_row.emplace(prompts[i], missing.size()).second) {
        missing.push_back(prompts[i]);
      }
    }
  }
  if (!missing.empty()) {
    // Each prompt alone: the encoders' matrix products over a batch may round
    // a row differently from the same prompt's alone (OpenBLAS does on AMD
    // EPYC), and a row must be the same bytes whatever came with it.
    std::vector<Conditioning> encoded_rows;
    encoded_rows.reserve(missing.size());
    for (const std::string& prompt : missing) {
      ASSIGN_OR_RETURN(const Conditioning alone, encode({prompt}));
      encoded_rows.push_back(RowOf(alone, 0));
    }
    for (size_t i = 0; i < prompts.size(); ++i) {
      if (!rows[i]) rows[i] = encoded_rows[missing_row.at(prompts[i])];
    }
    absl::MutexLock lock(&mutex_);
    for (size_t row = 0; row < missing.size(); ++row) {
      Insert(Key(max_sequence_length, missing[row]),
             std::move(encoded_rows[row]));
    }
  }
  std::vector<Conditioning> ordered;
  ordered.reserve(rows.size());
  for (std::optional<Conditioning>& row : rows) ordered.push_back(*row);
  absl::MutexLock lock(&mutex_);
  stats_.misses += static_cast<int64_t>(missing.size());
  stats_.hits += count - static_cast<int64_t>(missing.size());
  return StackRows(ordered);
}

void PromptEmbeddingCache::Insert(Key key, Conditioning row) {
  const int64_t bytes = BytesOf(row);
  if (bytes > capacity_bytes_ || index_.contains(key)) return;
  entries_.push_front(Entry{.key = key, .row = std::move(row), .bytes = bytes});
  index_.emplace(std::move(key), entries_.begin());
  stats_.bytes += bytes;
  while (stats_.bytes > capacity_bytes_) {
    stats_.bytes -= entries_.back().bytes;
    index_.erase(entries_.back().key);
    entries_.pop_back();
  }
  stats_.entries = static_cast<int64_t>(entries_.size());
}

PromptCacheStats PromptEmbeddingCache::stats() const {
  absl::MutexLock lock(&mutex_);
  return stats_;
}

}  // namespace ditserve::engine
