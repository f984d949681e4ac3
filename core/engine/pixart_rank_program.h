#ifndef DITSERVE_CORE_ENGINE_PIXART_RANK_PROGRAM_H_
#define DITSERVE_CORE_ENGINE_PIXART_RANK_PROGRAM_H_

#include <ATen/core/Tensor.h>

#include <memory>

#include "absl/status/statusor.h"
#include "core/engine/rank_program.h"
#include "core/parallel/stale_kv_attention.h"
#include "core/pipelines/pixart/pixart_pipeline.h"
#include "core/pipelines/pixart/pixart_prompt_encoder.h"

namespace ditserve::engine {

// PixArt-α/Σ on one rank of the mesh: the rank's data-parallel group encodes
// its prompts and negative prompts, denoises them at the generated size
// (the resolution bin, when binning) from their per-image seeds, each cfg
// rank running one guidance branch when cfg_degree is 2, the sp ranks
// splitting every transformer forward by sequence or the pp ranks running it
// as PipeFusion stages, and the groups' latents are gathered to rank 0.
class PixArtRankProgram : public RankProgram {
 public:
  // `stale_kv`: the attention of `pixart`'s transformer when pp > 1, else
  // null.
  PixArtRankProgram(std::unique_ptr<pipelines::PixArtPromptEncoder> encoder,
                    std::unique_ptr<pipelines::PixArtPipeline> pixart,
                    std::shared_ptr<parallel::StaleKvAttention> stale_kv);

  absl::StatusOr<at::Tensor> Run(RankContext& context) override;

  // Resized and centre-cropped back to the requested size after resolution
  // binning.
  absl::StatusOr<at::Tensor> Decode(const v1::InputConfig& config,
                                    const at::Tensor& latents,
                                    StageTimings& timings) override;

 private:
  // Final latents [end - first, C, h, w] of prompts [first, end).
  absl::StatusOr<at::Tensor> Generate(RankContext& context, int first, int end);

  std::unique_ptr<pipelines::PixArtPromptEncoder> encoder_;
  std::unique_ptr<pipelines::PixArtPipeline> pixart_;
  std::shared_ptr<parallel::StaleKvAttention> stale_kv_;
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_PIXART_RANK_PROGRAM_H_
