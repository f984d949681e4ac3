#ifndef DITSERVE_CORE_ENGINE_FLUX_RANK_PROGRAM_H_
#define DITSERVE_CORE_ENGINE_FLUX_RANK_PROGRAM_H_

#include <ATen/core/Tensor.h>

#include <memory>

#include "absl/status/statusor.h"
#include "core/engine/rank_program.h"
#include "core/parallel/stale_kv_attention.h"
#include "core/pipelines/flux/flux_pipeline.h"
#include "core/pipelines/text/flux_prompt_encoder.h"

namespace ditserve::engine {

// FLUX.1 on one rank of the mesh: the rank's data-parallel group encodes its
// prompts, denoises them from their per-image seeds (calling the step
// boundary after every step, also when the group has no prompt, so that all
// ranks stop together) and the groups' latents are gathered to rank 0. When
// sp = ring × ulysses > 1, the sp ranks of a group split every transformer
// forward by sequence (the transformer must attend through the mesh's
// models::Attention, see parallel::MakeAttention) and all hold the whole
// latents after each step. When pp > 1, each rank's transformer holds its
// PipeFusion stage's blocks and every forward runs through the stages of the
// pp group (whole sequence for the warm-up steps, then patch after patch with
// one-step-stale keys and values), whose ranks also all hold the whole
// latents after each step.
class FluxRankProgram : public RankProgram {
 public:
  // `stale_kv`: the attention of `flux`'s transformer when pp > 1, else
  // null.
  FluxRankProgram(std::unique_ptr<pipelines::FluxPromptEncoder> encoder,
                  std::unique_ptr<pipelines::FluxPipeline> flux,
                  std::shared_ptr<parallel::StaleKvAttention> stale_kv);

  absl::StatusOr<at::Tensor> Run(RankContext& context) override;

  absl::StatusOr<at::Tensor> Decode(const v1::InputConfig& config,
                                    const at::Tensor& latents,
                                    StageTimings& timings) override;

 private:
  // Final unpacked latents [prompts, C, h, w] of `prompts` of the config.
  absl::StatusOr<at::Tensor> Generate(RankContext& context, int first, int end);

  std::unique_ptr<pipelines::FluxPromptEncoder> encoder_;
  std::unique_ptr<pipelines::FluxPipeline> flux_;
  std::shared_ptr<parallel::StaleKvAttention> stale_kv_;
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_FLUX_RANK_PROGRAM_H_
