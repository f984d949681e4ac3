#ifndef DITSERVE_TESTS_UNIT_FAMILIES_THREAD_SEQUENCE_PARALLEL_H_
#define DITSERVE_TESTS_UNIT_FAMILIES_THREAD_SEQUENCE_PARALLEL_H_

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/models/layers/attention.h"
#include "core/parallel/pipefusion.h"
#include "core/parallel/sequence_parallel.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::testing {

// The shapes Freeze derives for a sequence of `tokens` over `degree` ranks.
v1::DerivedShapes SplitShapes(int tokens, int degree);

// The SequenceParallel of every rank of a `degree`-rank sp group run as
// threads of this process (ThreadRankGroups), splitting `tokens` as Freeze
// does, each with a gather buffer for forwards of at most `rows` rows of
// `channels` per token, as the engine plans it. Collectives wait at most
// `wait`.
std::vector<parallel::SequenceParallel> ThreadSequenceParallel(
    int tokens, int degree, int64_t rows, int64_t channels,
    std::chrono::milliseconds wait);

// How a thread rank of ThreadPipeFusion runs: its stage of the driver and
// the attention its stage transformer calls.
struct ThreadStage {
  parallel::PipeFusionStages stages;
  std::shared_ptr<models::Attention> attention;
};

// PipeFusion over `stages` stages, each split over `sp` sequence-parallel
// ranks that share keys and values over a ring (`ulysses` false) or by
// Ulysses head exchange (`ulysses` true), run as threads of this process:
// rank stage × sp + sp index, as the mesh orders them. Receive buffers are
// fresh tensors of the asked shape; one warm-up step; patches at
// `patch_offsets`. Collectives wait at most `wait`.
std::vector<ThreadStage> ThreadPipeFusion(int stages, int sp, bool ulysses,
                                          std::vector<int64_t> patch_offsets,
                                          std::chrono::milliseconds wait);

// `forward(rank)` for every rank in [0, ranks), each on its own thread
// without autograd, as the ranks of one group run.
std::vector<absl::StatusOr<at::Tensor>> RunOnRankThreads(
    int ranks, const std::function<absl::StatusOr<at::Tensor>(int)>& forward);

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_UNIT_FAMILIES_THREAD_SEQUENCE_PARALLEL_H_
