#include "core/models/block_range.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/models/tensor_checks.h"

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

absl::Status CheckBlockRange(absl::string_view model, const BlockRange& blocks,
                             int64_t total_blocks) {
  if (blocks.begin >= 0 && blocks.begin < blocks.end &&
      blocks.end <= total_blocks) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      model, " block range [", blocks.begin, ", ", blocks.end,
      ") is not a non-empty range inside [0, ", total_blocks, ")"));
}

absl::Status CheckHoldsEveryBlock(absl::string_view model,
                                  const BlockRange& blocks,
                                  int64_t total_blocks) {
  if (blocks.begin == 0 && blocks.end == total_blocks) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      model, " holds blocks [", blocks.begin, ", ", blocks.end, ") of ",
      total_blocks, "; a whole-model forward needs all of them"));
}

absl::Status CheckStageOutputArguments(absl::string_view model,
                                       const BlockRange& blocks,
                                       int64_t total_blocks,
                                       const at::Tensor& image_stream,
                                       const std::vector<int64_t>& shape) {
  if (blocks.end != total_blocks) {
    return absl::FailedPreconditionError(absl::StrCat(
        model, " holds blocks [", blocks.begin, ", ", blocks.end, ") of ",
        total_blocks, "; only the last PipeFusion stage projects the output"));
  }
  return CheckShape("image stream", image_stream, shape);
}

absl::Status CheckStageArguments(absl::string_view model,
                                 const BlockRange& blocks,
                                 const TokenSpan& patch, int64_t image_tokens,
                                 bool has_incoming) {
  if (patch.begin < 0 || patch.tokens < 0 ||
      patch.begin + patch.tokens > image_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "image tokens [", patch.begin, ", ", patch.begin + patch.tokens,
        ") are not a part of the ", image_tokens, " image tokens"));
  }
  const bool first_stage = blocks.begin == 0;
  if (first_stage == has_incoming) {
    return absl::InvalidArgumentError(absl::StrCat(
        model, " stage with blocks [", blocks.begin, ", ", blocks.end, ") ",
        first_stage ? "embeds the inputs itself and takes no incoming streams"
                    : "needs the previous stage's streams"));
  }
  return absl::OkStatus();
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
