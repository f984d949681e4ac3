#ifndef DITSERVE_CORE_MODELS_BLOCK_RANGE_H_
#define DITSERVE_CORE_MODELS_BLOCK_RANGE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/models/sequence_shard.h"

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

// INVALID_ARGUMENT naming `model` unless `blocks` is a non-empty range
// inside [0, total_blocks).
absl::Status CheckBlockRange(absl::string_view model, const BlockRange& blocks,
                             int64_t total_blocks);

// FAILED_PRECONDITION naming `model` unless `blocks` is every one of
// `total_blocks` (a whole-model forward).
absl::Status CheckHoldsEveryBlock(absl::string_view model,
                                  const BlockRange& blocks,
                                  int64_t total_blocks);

// The arguments of a stage's StageOutput: FAILED_PRECONDITION naming
// `model` unless `blocks` ends with the last of `total_blocks` (only the
// last PipeFusion stage projects the output), INVALID_ARGUMENT unless
// `image_stream` has `shape` (CheckShape).
absl::Status CheckStageOutputArguments(absl::string_view model,
                                       const BlockRange& blocks,
                                       int64_t total_blocks,
                                       const at::Tensor& image_stream,
                                       const std::vector<int64_t>& shape);

// INVALID_ARGUMENT naming `model` when a PipeFusion stage holding `blocks`
// is asked to run image tokens `patch` that are not a part of
// `image_tokens` (a text-only forward has none), or gets incoming streams
// although it is the first stage (blocks from 0, which embeds the inputs) or
// none although it is not.
absl::Status CheckStageArguments(absl::string_view model,
                                 const BlockRange& blocks,
                                 const TokenSpan& patch, int64_t image_tokens,
                                 bool has_incoming);

// The block index of checkpoint tensor "<list>.<index>.rest", or nullopt
// for other names.
std::optional<int64_t> BlockIndex(absl::string_view name,
                                  absl::string_view list);

}  // namespace ditserve::models

#endif  // DITSERVE_CORE_MODELS_BLOCK_RANGE_H_
