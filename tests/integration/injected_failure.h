#ifndef DITSERVE_TESTS_INTEGRATION_INJECTED_FAILURE_H_
#define DITSERVE_TESTS_INTEGRATION_INJECTED_FAILURE_H_

// How a rank test program's injected failure leaves its rank program, named
// the same by the program's --fail_as flag and by the tests that pass it.

#include <array>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ditserve::testing {

enum class InjectedFailure {
  // An INTERNAL Status.
  kReturned,
  // LibTorch's c10::Error, as a failing kernel throws it.
  kThrown,
  // LibTorch's c10::OutOfMemoryError, as its GPU allocator throws it.
  kOutOfMemory,
};

inline constexpr std::array<std::pair<InjectedFailure, absl::string_view>, 3>
    kInjectedFailureNames = {
        {{InjectedFailure::kReturned, "returned"},
         {InjectedFailure::kThrown, "thrown"},
         {InjectedFailure::kOutOfMemory, "out_of_memory"}}};

inline std::string AbslUnparseFlag(InjectedFailure failure) {
  for (const auto& [value, name] : kInjectedFailureNames) {
    if (value == failure) return std::string(name);
  }
  return absl::StrCat(static_cast<int>(failure));
}

inline bool AbslParseFlag(absl::string_view text, InjectedFailure* failure,
                          std::string* error) {
  for (const auto& [value, name] : kInjectedFailureNames) {
    if (name == text) {
      *failure = value;
      return true;
    }
  }
  *error = "not returned, thrown or out_of_memory";
  return false;
}

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_INTEGRATION_INJECTED_FAILURE_H_
