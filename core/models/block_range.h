#ifndef DITSERVE_CORE_MODELS_BLOCK_RANGE_H_
#define DITSERVE_CORE_MODELS_BLOCK_RANGE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"

namespace ditserve::models {

// Transformer blocks [begin, end): what one PipeFusion stage holds.
struct BlockRange {
  int64_t begin = 0;
  int64_t end = 0;

  bool Contains(int64_t block) const { return block >= begin && block < end; }
};

// PipeFusion stage `stage` of `stages` (0 <= stage < stages <= blocks) over
// blocks weighing `block_weights`: consecutive non-empty ranges that split
// the weight as evenly as block boundaries allow.
BlockRange SplitBlocksByWeight(const std::vector<int64_t>& block_weights,
                               int stage, int stages);

// The block index of checkpoint tensor "<list>.<index>.rest", or nullopt
// for other names.
std::optional<int64_t> BlockIndex(absl::string_view name,
                                  absl::string_view list);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_BLOCK_RANGE_H_
