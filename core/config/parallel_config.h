#ifndef DITSERVE_CORE_CONFIG_PARALLEL_CONFIG_H_
#define DITSERVE_CORE_CONFIG_PARALLEL_CONFIG_H_

#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/config/model_spec.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::config {

// Parallel degrees as given on the command line (the same on every rank).
struct ParallelFlags {
  // Omitted: world size / (cfg × pipefusion × ring × ulysses), as torchrun
  // and Megatron infer data parallelism.
  std::optional<int> dp_degree;
  int cfg_degree = 1;
  int pipefusion_degree = 1;
  int ring_degree = 1;
  int ulysses_degree = 1;
  // Image patches flowing through the PipeFusion stages; 0 means
  // pipefusion_degree.
  int num_pipeline_patch = 0;
  // Synchronous PipeFusion steps before stale activations are used.
  int warmup_steps = 1;
};

// Checks the degrees against each other and the world size and returns the
// explicit config (no zeros, dp inferred when omitted). Errors name the flags
// and the numbers, e.g. "dp 1 × cfg 1 × pipefusion 4 × ring 1 × ulysses 1 =
// 4 ≠ world size 2" or, with dp omitted, "world size 6 is not a multiple of
// cfg 1 × pipefusion 4 × ring 1 × ulysses 1 = 4 (--dp_degree omitted)".
absl::StatusOr<v1::ParallelConfig> MakeParallelConfig(
    const ParallelFlags& flags, int world_size);

// Checks a parallel config against the model it will run: heads divisible by
// ulysses, at least one transformer layer per PipeFusion stage, cfg 2 only
// for families with classifier-free guidance, and a patch grid at the
// family's default size with a row for every PipeFusion patch.
absl::Status ValidateParallelForModel(const v1::ParallelConfig& parallel,
                                      const ModelSpec& spec);

// ring × ulysses.
int SequenceParallelDegree(const v1::ParallelConfig& parallel);

}  // namespace ditserve::config

#endif  // DITSERVE_CORE_CONFIG_PARALLEL_CONFIG_H_
