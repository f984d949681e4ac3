#ifndef DITSERVE_CORE_ENGINE_DP_GATHER_H_
#define DITSERVE_CORE_ENGINE_DP_GATHER_H_

#include <ATen/core/Tensor.h>

#include "absl/status/statusor.h"
#include "core/engine/pipeline.h"

namespace ditserve::engine {

// Gathers every data-parallel group's final latents to rank 0 through the
// plan's dp_latents_gather buffer and returns them in request order
// ([prompts, channels, latent_height, latent_width], the plan's
// output_latents) on rank 0, an undefined tensor on other ranks.
// `group_latents` is this rank's group's result, [max_batch_per_dp_group,
// channels, latent_height, latent_width] with rows past the group's prompt
// count ignored; only the first rank of each dp replica (all other
// coordinates 0) sends, the others pass an undefined tensor and return.
absl::StatusOr<at::Tensor> GatherDpLatents(PipelineContext& context,
                                           const at::Tensor& group_latents);

// Prompt indices [first, end) the dp group of `rank` runs.
std::pair<int, int> DpGroupPrompts(const PipelineContext& context);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_DP_GATHER_H_
