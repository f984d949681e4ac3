#ifndef DITSERVE_CORE_ENGINE_SD3_RANK_PROGRAM_H_
#define DITSERVE_CORE_ENGINE_SD3_RANK_PROGRAM_H_

#include <ATen/core/Tensor.h>

#include <memory>

#include "absl/status/statusor.h"
#include "core/engine/rank_program.h"
#include "core/parallel/stale_kv_attention.h"
#include "core/pipelines/sd3/sd3_pipeline.h"
#include "core/pipelines/sd3/sd3_prompt_encoder.h"

namespace ditserve::engine {

// SD3 on one rank of the mesh: the rank's data-parallel group encodes its
// prompts and negative prompts and denoises them from their per-image seeds,
// each cfg rank running one guidance branch when cfg_degree is 2, the sp
// ranks splitting every transformer forward by sequence or the pp ranks
// running it as PipeFusion stages, and the groups' latents are gathered to
// rank 0.
class SD3RankProgram : public RankProgram {
 public:
  // `stale_kv`: the attention of `sd3`'s transformer when pp > 1, else null.
  SD3RankProgram(std::unique_ptr<pipelines::SD3PromptEncoder> encoder,
                 std::unique_ptr<pipelines::SD3Pipeline> sd3,
                 std::shared_ptr<parallel::StaleKvAttention> stale_kv);

  absl::StatusOr<at::Tensor> Run(RankContext& context) override;

  absl::StatusOr<at::Tensor> Decode(const v1::InputConfig& config,
                                    const at::Tensor& latents,
                                    StageTimings& timings) override;

 private:
  // Final latents [end - first, C, h, w] of prompts [first, end).
  absl::StatusOr<at::Tensor> Generate(RankContext& context, int first, int end);

  std::unique_ptr<pipelines::SD3PromptEncoder> encoder_;
  std::unique_ptr<pipelines::SD3Pipeline> sd3_;
  std::shared_ptr<parallel::StaleKvAttention> stale_kv_;
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_SD3_RANK_PROGRAM_H_
