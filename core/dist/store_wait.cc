#include "core/dist/store_wait.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/base/guarded.h"
#include "core/base/monotonic_clock.h"
#include "core/base/status_macros.h"

namespace ditserve::dist {
namespace {

// Short enough that a rank leaves a superseded generation at once, long
// enough that a dozen waiting ranks do not load the store.
constexpr absl::Duration kSlice = absl::Milliseconds(50);

}  // namespace

absl::Status WaitForKeys(c10d::Store& store,
                         const std::vector<std::string>& keys,
                         const StoreWait& wait, const std::string& what) {
  const absl::Time deadline =
      base::MonotonicNow() + absl::FromChrono(wait.timeout);
  while (true) {
    ASSIGN_OR_RETURN(const bool present,
                     base::GuardedAs(absl::StatusCode::kUnavailable,
                                     absl::StrCat("waiting for ", what),
                                     [&] { return store.check(keys); }));
    if (present) return absl::OkStatus();
    if (wait.keep_waiting) RETURN_IF_ERROR(wait.keep_waiting());
    const absl::Time now = base::MonotonicNow();
    if (now >= deadline) {
      return absl::UnavailableError(absl::StrCat(
          what, " did not arrive within ", wait.timeout.count(), " ms"));
    }
    absl::SleepFor(std::min(kSlice, deadline - now));
  }
}

}  // namespace ditserve::dist
