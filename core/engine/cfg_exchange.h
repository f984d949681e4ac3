#ifndef DITSERVE_CORE_ENGINE_CFG_EXCHANGE_H_
#define DITSERVE_CORE_ENGINE_CFG_EXCHANGE_H_

#include <optional>

#include "core/engine/rank_program.h"
#include "core/parallel/cfg_split.h"

namespace ditserve::engine {

// This rank's CFG-parallel split, or nullopt when cfg_degree is 1: the rank
// runs the guidance branch of its cfg coordinate (0 negative, 1 positive),
// and each step's exchange all-gathers both ranks' transformer outputs over
// the cfg group into the plan's cfg_branch_gather buffer. `prompts` is the
// dp group's prompt count; outputs travel padded to max_batch_per_dp_group
// rows, so every group's gather has the planned size. `context` must outlive
// the split.
std::optional<parallel::CfgSplit> CfgSplitFor(RankContext& context,
                                              int prompts);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_CFG_EXCHANGE_H_
