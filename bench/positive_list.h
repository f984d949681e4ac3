#ifndef DITSERVE_BENCH_POSITIVE_LIST_H_
#define DITSERVE_BENCH_POSITIVE_LIST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ditserve::bench {

// The values of a comma-separated flag (absl gives its items), each a
// positive integer, or INVALID_ARGUMENT naming --`flag` and the item.
absl::StatusOr<std::vector<int64_t>> ParsePositiveList(
    const std::vector<std::string>& items, const char* flag);

}  // namespace ditserve::bench

#endif  // DITSERVE_BENCH_POSITIVE_LIST_H_
