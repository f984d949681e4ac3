#ifndef DITSERVE_CORE_MODELS_GUARDED_FORWARD_H_
#define DITSERVE_CORE_MODELS_GUARDED_FORWARD_H_

#include <exception>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/parallel/collective_error.h"

namespace ditserve::models {

// Runs a forward of `model` (its class name, for the message), keeping the
// Status of a failed sequence-parallel collective and turning other
// LibTorch errors into INTERNAL: the module boundary where exceptions end.
template <typename Body>
auto GuardedForward(absl::string_view model, Body body)
    -> absl::StatusOr<decltype(body())> {
  try {
    return body();
  } catch (const parallel::CollectiveError& e) {
    return e.status();
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat(model, " forward failed: ", e.what()));
  }
}

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_GUARDED_FORWARD_H_
