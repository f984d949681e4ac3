#ifndef DITSERVE_TESTS_UNIT_PIPELINES_THREAD_SEQUENCE_PARALLEL_H_
#define DITSERVE_TESTS_UNIT_PIPELINES_THREAD_SEQUENCE_PARALLEL_H_

#include <ATen/core/Tensor.h>

#include <chrono>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/pipelines/sequence_parallel.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::testing {

// The shapes Freeze derives for a sequence of `tokens` over `degree` ranks.
v1::DerivedShapes SplitShapes(int tokens, int degree);

// The SequenceParallel of every rank of a `degree`-rank sp group run as
// threads of this process (ThreadRankGroups), splitting `tokens` as Freeze
// does. Collectives wait at most `wait`.
std::vector<pipelines::SequenceParallel> ThreadSequenceParallel(
    int tokens, int degree, std::chrono::milliseconds wait);

// `forward(rank)` for every rank in [0, ranks), each on its own thread
// without autograd, as the ranks of one group run.
std::vector<absl::StatusOr<at::Tensor>> RunOnRankThreads(
    int ranks, const std::function<absl::StatusOr<at::Tensor>(int)>& forward);

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_UNIT_PIPELINES_THREAD_SEQUENCE_PARALLEL_H_
