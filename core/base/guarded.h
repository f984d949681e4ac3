#ifndef DITSERVE_CORE_BASE_GUARDED_H_
#define DITSERVE_CORE_BASE_GUARDED_H_

// The one place where exceptions (LibTorch's c10::Error and
// c10::OutOfMemoryError, std::bad_alloc, a StatusError) become Status.

#include <c10/util/Exception.h>

#include <exception>
#include <stdexcept>
#include <type_traits>
#include <utility>

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

// The first line of an exception's message (c10::Error appends a C++
// backtrace after it).
inline absl::string_view FirstLine(const std::exception& error) {
  const absl::string_view what = error.what();
  return what.substr(0, what.find('\n'));
}

// Runs `body`. A StatusError gives back the Status it carries; a
// std::invalid_argument becomes INVALID_ARGUMENT, a c10::OutOfMemoryError
// (what LibTorch's GPU allocator throws when the device is full)
// RESOURCE_EXHAUSTED and any other exception `code` (UNAVAILABLE where a
// group could not form, RESOURCE_EXHAUSTED where an allocation failed), each
// "<context>: <first line of what()>". A body returning T gives StatusOr<T>;
// one returning Status, StatusOr<T> or void gives that (void: Status).
template <typename Body>
auto GuardedAs(absl::StatusCode code, absl::string_view context, Body&& body) ->
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
  } catch (const std::invalid_argument& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(context, ": ", FirstLine(error)));
  } catch (const c10::OutOfMemoryError& error) {
    // Running out of device memory is a matter of size (the run's, or what
    // ran beside it), not a fault in the code: whatever `code` the caller
    // chose for faults, the client and alerting hear RESOURCE_EXHAUSTED.
    return absl::ResourceExhaustedError(
        absl::StrCat(context, ": ", FirstLine(error)));
  } catch (const std::exception& error) {
    return absl::Status(code, absl::StrCat(context, ": ", FirstLine(error)));
  }
}

// GuardedAs with INTERNAL: an exception the code did not expect.
template <typename Body>
auto Guarded(absl::string_view context, Body&& body) {
  return GuardedAs(absl::StatusCode::kInternal, context,
                   std::forward<Body>(body));
}

}  // namespace ditserve::base

#endif  // DITSERVE_CORE_BASE_GUARDED_H_
