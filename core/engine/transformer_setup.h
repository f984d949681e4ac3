#ifndef DITSERVE_CORE_ENGINE_TRANSFORMER_SETUP_H_
#define DITSERVE_CORE_ENGINE_TRANSFORMER_SETUP_H_

#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "core/engine/rank_runtime.h"
#include "core/models/block_range.h"
#include "core/models/layers/attention.h"
#include "core/parallel/stale_kv_attention.h"

namespace ditserve::engine {

// How this rank's transformer is built: under PipeFusion it holds its
// stage's blocks and keeps every layer's keys and values for the patch
// pipeline (shared with its ring and Ulysses ranks, if any); else it holds
// every block and attends locally or over the rank's ring / Ulysses groups.
struct TransformerSetup {
  // Unset: every block.
  std::optional<models::BlockRange> blocks;
  // Set exactly under PipeFusion; `attention` always.
  std::shared_ptr<parallel::StaleKvAttention> stale_kv;
  std::shared_ptr<models::Attention> attention;
};

// The setup of `runtime`'s rank. `stage_blocks(stage, stages)` is the
// family's block range of a PipeFusion stage (it reads the checkpoint's
// transformer config, so it runs only when pp > 1).
absl::StatusOr<TransformerSetup> SetUpTransformer(
    const RankRuntime& runtime,
    const std::function<absl::StatusOr<models::BlockRange>(int, int)>&
        stage_blocks);

// Logs the blocks of `total_blocks` that rank `rank`'s transformer holds
// (`blocks`; unset: all) and the bytes of its weights: what PipeFusion saves
// a stage, since only its blocks are read.
void LogStageWeights(int rank, const std::optional<models::BlockRange>& blocks,
                     int64_t total_blocks, torch::nn::Module& transformer);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_TRANSFORMER_SETUP_H_
