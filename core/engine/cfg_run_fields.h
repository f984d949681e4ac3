#ifndef DITSERVE_CORE_ENGINE_CFG_RUN_FIELDS_H_
#define DITSERVE_CORE_ENGINE_CFG_RUN_FIELDS_H_

// What the rank programs of the classifier-free-guidance families (PixArt,
// SD3) share: their requests have the same run fields and their pipelines
// the same InitialLatents / Denoise interface.

#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/base/status_macros.h"
#include "core/engine/cfg_exchange.h"
#include "core/engine/pipefusion_stages_for.h"
#include "core/engine/rank_program.h"
#include "core/engine/sequence_parallel_for.h"

namespace ditserve::engine {

// Sets `request`'s run fields for the config's prompts [first, end): the
// generated size, steps, guidance scale, per-image seeds and this rank's
// CFG-parallel split, sequence-parallel shard and PipeFusion stages
// (`stale_kv`: the stage transformer's attention when pp > 1). Errors of
// SequenceParallelFor and StagesFor.
template <typename Request>
absl::Status SetCfgRunFields(
    RankContext& context, int first, int end,
    const std::shared_ptr<parallel::StaleKvAttention>& stale_kv,
    Request& request) {
  const v1::InputConfig& config = context.config;
  request.height = config.shapes().generated_height();
  request.width = config.shapes().generated_width();
  request.num_inference_steps = config.num_inference_steps();
  request.guidance_scale = config.guidance_scale();
  request.seeds.assign(config.seeds().begin() + first,
                       config.seeds().begin() + end);
  request.cfg_split = CfgSplitFor(context, end - first);
  ASSIGN_OR_RETURN(request.sequence_parallel, SequenceParallelFor(context));
  ASSIGN_OR_RETURN(request.stages, StagesFor(context, stale_kv));
  return absl::OkStatus();
}

// The final latents of `request` from its seeded noise, calling the step
// boundary after every step (timed as denoise).
template <typename FamilyPipeline, typename Request>
absl::StatusOr<at::Tensor> DenoiseFromSeeds(RankContext& context,
                                            FamilyPipeline& pipeline,
                                            const Request& request) {
  ScopedStageTimer timer(context.timings, Stage::kDenoise);
  ASSIGN_OR_RETURN(at::Tensor latents, pipeline.InitialLatents(request));
  return pipeline.Denoise(request, std::move(latents),
                          [&context](const auto& event) {
                            return context.step_boundary(event.step);
                          });
}

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_CFG_RUN_FIELDS_H_
