#ifndef DITSERVE_CORE_ENGINE_GUIDED_GENERATION_H_
#define DITSERVE_CORE_ENGINE_GUIDED_GENERATION_H_

// What the rank pipelines of the classifier-free-guidance families (PixArt,
// SD3) share: their requests have the same run fields and their pipelines
// the same InitialLatents / Denoise interface.

#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/engine/cfg_exchange.h"
#include "core/engine/pipefusion_stages_for.h"
#include "core/engine/pipeline.h"
#include "core/engine/sequence_parallel_for.h"

namespace ditserve::engine {

// Sets `request`'s run fields for the config's prompts [first, end): the
// generated size, steps, guidance scale, per-image seeds and this rank's
// CFG-parallel split, sequence-parallel shard and PipeFusion stages
// (`stale_kv`: the stage transformer's attention when pp > 1). Errors of
// SequenceParallelFor and StagesFor.
template <typename Request>
absl::Status SetGuidedRunFields(
    PipelineContext& context, int first, int end,
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
  absl::StatusOr<std::optional<pipelines::SequenceParallel>> sequence_parallel =
      SequenceParallelFor(context);
  if (!sequence_parallel.ok()) return sequence_parallel.status();
  request.sequence_parallel = *std::move(sequence_parallel);
  absl::StatusOr<std::optional<pipelines::PipeFusionStages>> stages =
      StagesFor(context, stale_kv);
  if (!stages.ok()) return stages.status();
  request.stages = *std::move(stages);
  return absl::OkStatus();
}

// The final latents of `request` from its seeded noise, calling the step
// boundary after every step (timed as denoise).
template <typename FamilyPipeline, typename Request>
absl::StatusOr<at::Tensor> DenoiseFromSeeds(PipelineContext& context,
                                            FamilyPipeline& pipeline,
                                            const Request& request) {
  ScopedStageTimer timer(context.timings, Stage::kDenoise);
  absl::StatusOr<at::Tensor> latents = pipeline.InitialLatents(request);
  if (!latents.ok()) return latents.status();
  return pipeline.Denoise(request, *std::move(latents),
                          [&context](const auto& event) {
                            return context.step_boundary(event.step);
                          });
}

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_GUIDED_GENERATION_H_
