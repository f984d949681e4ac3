#ifndef DITSERVE_CORE_MODELS_KEPT_FOR_KEY_H_
#define DITSERVE_CORE_MODELS_KEPT_FOR_KEY_H_

#include <optional>
#include <type_traits>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ditserve::models {

// The value made for the last key, kept until another key comes. For
// position tables: every step of a request, and every patch of PipeFusion's,
// asks for the same grid on the same device. Made on the host in every
// forward, such a table is copied to a GPU each time, the copy waiting for
// the GPU, and on a GPU making it can take longer than the forward itself.
template <typename Key, typename Value>
class KeptForKey {
 public:
  // The kept value when `key` equals the last key; otherwise `make()`, which
  // returns a Value or an absl::StatusOr<Value>, kept when it succeeds.
  template <typename Make>
  std::invoke_result_t<Make> Get(const Key& key, Make&& make) {
    absl::MutexLock lock(&mutex_);
    if (kept_.has_value() && kept_->first == key) return kept_->second;
    std::invoke_result_t<Make> made = std::forward<Make>(make)();
    if constexpr (std::is_same_v<std::invoke_result_t<Make>, Value>) {
      kept_.emplace(key, made);
    } else if (made.ok()) {
      kept_.emplace(key, *made);
    }
    return made;
  }

 private:
  absl::Mutex mutex_;
  std::optional<std::pair<Key, Value>> kept_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_KEPT_FOR_KEY_H_
