#ifndef DITSERVE_WORKER_STAGE_WEIGHTS_H_
#define DITSERVE_WORKER_STAGE_WEIGHTS_H_

#include <torch/nn/module.h>

#include <cstdint>

namespace ditserve::worker {

// Logs the blocks [begin, end) of `total_blocks` rank `rank`'s transformer
// holds and the bytes of its weights: what PipeFusion saves a stage, since
// only its blocks are read.
void LogStageWeights(int rank, int64_t begin, int64_t end, int64_t total_blocks,
                     torch::nn::Module& transformer);

}  // namespace ditserve::worker

#endif  // DITSERVE_WORKER_STAGE_WEIGHTS_H_
