#ifndef DITSERVE_CORE_BASE_GUARDED_H_
#define DITSERVE_CORE_BASE_GUARDED_H_

// The one place where exceptions (LibTorch's c10::Error, std::bad_alloc, a
// StatusError) become Status.

#include <exception>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/base/status_error.h"

namespace ditserve::base {
namespace guarded_internal {

template <typename T>
struct Result {
  using type = absl::StatusOr<T>;
};
template <>
struct Result<void> {
  using type = absl::Status;
};
template <>
struct Result<absl::Status> {
  using type = absl::Status;
};
template <typename T>
struct Result<absl::StatusOr<T>> {
  using type = absl::StatusOr<T>;
};

}  // namespace guarded_internal

// Runs `body`. A StatusError gives back the Status it carries; any other
// exception becomes INTERNAL "<context>: <what>". A body returning T gives
// StatusOr<T>; one returning Status, StatusOr<T> or void gives that (void:
// Status).
template <typename Body>
auto Guarded(absl::string_view context, Body&& body) ->
    typename guarded_internal::Result<std::invoke_result_t<Body>>::type {
  try {
    if constexpr (std::is_void_v<std::invoke_result_t<Body>>) {
      body();
      return absl::OkStatus();
    } else {
      return body();
    }
  } catch (const StatusError& error) {
    return error.status();
  } catch (const std::exception& error) {
    return absl::InternalError(absl::StrCat(context, ": ", error.what()));
  }
}

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_GUARDED_H_
