#include "core/engine/transformer_setup.h"

#include <torch/torch.h>

#include <utility>

#include "core/base/status_macros.h"
#include "core/parallel/make_attention.h"
#include "spdlog/spdlog.h"

namespace ditserve::engine {

absl::StatusOr<TransformerSetup> SetUpTransformer(
    const RankRuntime& runtime,
    const std::function<absl::StatusOr<models::BlockRange>(int, int)>&
        stage_blocks) {
  const dist::Mesh& mesh = runtime.mesh();
  TransformerSetup setup;
  if (mesh.Degree(dist::Axis::kPp) == 1) {
    setup.attention = parallel::MakeAttention(
        mesh, runtime.groups(), runtime.sequence_parallel_options());
    return setup;
  }
  // config::ValidateParallelForModel has checked pp <= the blocks.
  ASSIGN_OR_RETURN(setup.blocks,
                   stage_blocks(mesh.CoordinatesOf(runtime.env().rank).pp,
                                mesh.Degree(dist::Axis::kPp)));
  parallel::PipeFusionAttention attention = parallel::MakePipeFusionAttention(
      mesh, runtime.groups(), runtime.sequence_parallel_options());
  setup.stale_kv = std::move(attention.stale_kv);
  setup.attention = std::move(attention.attention);
  return setup;
}

void LogStageWeights(int rank, const std::optional<models::BlockRange>& blocks,
                     int64_t total_blocks, torch::nn::Module& transformer) {
  const models::BlockRange held =
      blocks.value_or(models::BlockRange{0, total_blocks});
  int64_t bytes = 0;
  for (const at::Tensor& parameter : transformer.parameters()) {
    bytes += parameter.numel() * parameter.element_size();
  }
  spdlog::info(
      "rank {} loaded transformer blocks [{}, {}) of {}: {} bytes of "
      "transformer weights",
      rank, held.begin, held.end, total_blocks, bytes);
}

}  // namespace ditserve::engine
