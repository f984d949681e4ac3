#include "bench/positive_list.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ditserve::bench {

absl::StatusOr<std::vector<int64_t>> ParsePositiveList(
    const std::vector<std::string>& items, const char* flag) {
  std::vector<int64_t> values;
  for (const std::string& item : items) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(item, &value) || value <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, ": \"", item, "\" is not a positive integer"));
    }
    values.push_back(value);
  }
  return values;
}

}  // namespace ditserve::bench
