#ifndef DITSERVE_CORE_ENGINE_FAMILY_RANK_PROGRAM_H_
#define DITSERVE_CORE_ENGINE_FAMILY_RANK_PROGRAM_H_

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/engine/prompt_embedding_cache.h"
#include "core/engine/rank_program.h"
#include "core/families/family.h"
#include "core/parallel/stale_kv_attention.h"

namespace ditserve::engine {

// Any family on one rank of the mesh: the rank's data-parallel group encodes
// its prompts (and negative prompts, with classifier-free guidance) and
// denoises them at the generated size from their per-image seeds, each cfg
// rank running one guidance branch when cfg_degree is 2, the sp ranks
// splitting every transformer forward by sequence or the pp ranks running it
// as PipeFusion stages; the groups' latents are gathered to rank 0, which
// decodes them.
class FamilyRankProgram : public RankProgram {
 public:
  // `stale_kv`: the attention of `model`'s transformer when pp > 1, else
  // null. Prompts are encoded through `prompt_cache`, which outlives the
  // program when the group re-forms.
  FamilyRankProgram(std::unique_ptr<families::FamilyModel> model,
                    std::shared_ptr<parallel::StaleKvAttention> stale_kv,
                    std::shared_ptr<PromptEmbeddingCache> prompt_cache);

  absl::StatusOr<at::Tensor> Run(RankContext& context) override;

  absl::StatusOr<at::Tensor> Decode(const v1::InputConfig& config,
                                    const at::Tensor& latents,
                                    StageTimings& timings) override;

 private:
  // Final latents [end - first, C, h, w] of prompts [first, end).
  absl::StatusOr<at::Tensor> Generate(RankContext& context, int first, int end);

  // The conditioning of `prompts`, through the cache.
  absl::StatusOr<families::Conditioning> EncodePrompts(
      const std::vector<std::string>& prompts, int max_sequence_length);

  std::unique_ptr<families::FamilyModel> model_;
  std::shared_ptr<parallel::StaleKvAttention> stale_kv_;
  std::shared_ptr<PromptEmbeddingCache> prompt_cache_;
};

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_FAMILY_RANK_PROGRAM_H_
