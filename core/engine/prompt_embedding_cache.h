#ifndef DITSERVE_CORE_ENGINE_PROMPT_EMBEDDING_CACHE_H_
#define DITSERVE_CORE_ENGINE_PROMPT_EMBEDDING_CACHE_H_

#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/families/family.h"

namespace ditserve::engine {

struct PromptCacheStats {
  // Prompt rows taken from the cache, and rows the text encoders ran for,
  // since the cache was made.
  int64_t hits = 0;
  int64_t misses = 0;
  // What the cache holds now.
  int64_t entries = 0;
  int64_t bytes = 0;
};

// The text encoders' output per (prompt, max_sequence_length), kept on the
// model's device and dtype so that a prompt seen again, an image's negative
// prompt (most often empty) or a prompt repeated within one batch skips the
// encoders. A row is what the encoders give for that prompt alone, cached or
// not, so a request's output depends neither on what was cached nor on what
// came with it. Least recently used rows go first beyond `capacity_bytes`; 0
// keeps nothing between calls. The model it caches for must
// never change: a re-formed group reloads the same checkpoint. Thread-safe.
class PromptEmbeddingCache {
 public:
  using Encoder = std::function<absl::StatusOr<families::Conditioning>(
      const std::vector<std::string>& prompts)>;

  explicit PromptEmbeddingCache(int64_t capacity_bytes);

  // The conditioning of `prompts`, a row each in order: rows held from
  // earlier calls, the others from a call of `encode` on each distinct
  // prompt missing, alone. Fails as `encode` does, keeping nothing of that
  // call.
  absl::StatusOr<families::Conditioning> Encode(
      const std::vector<std::string>& prompts, int max_sequence_length,
      const Encoder& encode);

  PromptCacheStats stats() const;
  int64_t capacity_bytes() const { return capacity_bytes_; }

 private:
  using Key = std::pair<int, std::string>;
  struct Entry {
    Key key;
    families::Conditioning row;
    int64_t bytes = 0;
  };

  // Most recently used first.
  void Insert(Key key, families::Conditioning row)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const int64_t capacity_bytes_;
  mutable absl::Mutex mutex_;
  std::list<Entry> entries_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<Key, std::list<Entry>::iterator> index_
      ABSL_GUARDED_BY(mutex_);
  PromptCacheStats stats_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_PROMPT_EMBEDDING_CACHE_H_
