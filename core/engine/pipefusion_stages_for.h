#ifndef DITSERVE_CORE_ENGINE_PIPEFUSION_STAGES_FOR_H_
#define DITSERVE_CORE_ENGINE_PIPEFUSION_STAGES_FOR_H_

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "core/engine/rank_program.h"
#include "core/parallel/pipefusion.h"
#include "core/parallel/stale_kv_attention.h"

namespace ditserve::engine {

// The PipeFusion stages of this rank's group when pp > 1 (with the rank's sp
// group when ring × ulysses > 1), else nullopt.
// `stale_kv` is the attention of the rank's stage transformer
// (FAILED_PRECONDITION when pp > 1 without one). Stages receive into the
// planned buffers: a dp group with fewer prompts than the largest one, or a
// rank running one guidance branch, uses the leading rows of buffers planned
// for max_batch_per_dp_group × branches_per_cfg_rank rows. `context` must
// outlive the stages.
absl::StatusOr<std::optional<parallel::PipeFusionStages>> StagesFor(
    RankContext& context,
    const std::shared_ptr<parallel::StaleKvAttention>& stale_kv);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_PIPEFUSION_STAGES_FOR_H_
