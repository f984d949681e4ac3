#include "worker/stage_weights.h"

#include <torch/torch.h>

#include "spdlog/spdlog.h"

namespace ditserve::worker {

void LogStageWeights(int rank, int64_t begin, int64_t end, int64_t total_blocks,
                     torch::nn::Module& transformer) {
  int64_t bytes = 0;
  for (const at::Tensor& parameter : transformer.parameters()) {
    bytes += parameter.numel() * parameter.element_size();
  }
  spdlog::info(
      "rank {} loaded transformer blocks [{}, {}) of {}: {} bytes of "
      "transformer weights",
      rank, begin, end, total_blocks, bytes);
}

}  // namespace ditserve::worker
