#include "core/models/block_range.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace ditserve::models {

BlockRange SplitBlocksByWeight(const std::vector<int64_t>& block_weights,
                               int stage, int stages) {
  const int64_t total = static_cast<int64_t>(block_weights.size());
  // prefix[b]: the weight of blocks [0, b).
  std::vector<int64_t> prefix(total + 1, 0);
  for (int64_t block = 0; block < total; ++block) {
    prefix[block + 1] = prefix[block] + block_weights[block];
  }
  // Boundary k is the block boundary nearest to k/stages of the weight,
  // kept far enough from its neighbours that every stage has a block.
  const auto boundary = [&](int64_t k, int64_t previous) {
    if (k == stages) return total;
    const int64_t lowest = previous + 1;
    const int64_t highest = total - (stages - k);
    int64_t best = lowest;
    for (int64_t b = lowest; b <= highest; ++b) {
      if (std::abs(prefix[b] * stages - k * prefix[total]) <
          std::abs(prefix[best] * stages - k * prefix[total])) {
        best = b;
      }
    }
    return best;
  };
  int64_t begin = 0;
  for (int k = 1; k <= stage; ++k) begin = boundary(k, begin);
  return {begin, boundary(stage + 1, begin)};
}

std::optional<int64_t> BlockIndex(absl::string_view name,
                                  absl::string_view list) {
  if (!absl::ConsumePrefix(&name, list) || !absl::ConsumePrefix(&name, ".")) {
    return std::nullopt;
  }
  int64_t index = 0;
  if (!absl::SimpleAtoi(name.substr(0, name.find('.')), &index)) {
    return std::nullopt;
  }
  return index;
}

}  // namespace ditserve::models
