#ifndef DITSERVE_TESTS_INTEGRATION_SHARD_GATHER_PROGRAM_H_
#define DITSERVE_TESTS_INTEGRATION_SHARD_GATHER_PROGRAM_H_

#include <ATen/core/Tensor.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/engine/rank_program.h"
#include "tests/integration/injected_failure.h"

namespace ditserve::testing {

// A rank program that does real collective work through the plan's buffers
// without a model: under sequence parallelism every rank fills its shard of
// a forward's outputs from (seed, rank) and gathers the sp group's shards
// into the planned buffer as the families' forwards do; each dp group's
// prompts' latents, made from each prompt's seed, are gathered to rank 0 by
// engine::RunDpGroup. Every received value is checked against what its
// sender must have computed; a difference is INTERNAL naming the rank or
// prompt.
class ShardGatherProgram : public engine::RankProgram {
 public:
  // `stall`: how long this rank sleeps before its first all-gather, so that
  // its peers' waits time out with every rank alive. `fail_step`: the
  // 0-based step during which this rank's first run fails on its own, after
  // that step's gather and, when `fail_after_boundary`, after its step
  // boundary too, before its preview gather (-1: never), as `fail_as`
  // says.
  explicit ShardGatherProgram(
      absl::Duration stall = absl::ZeroDuration(), int fail_step = -1,
      bool fail_after_boundary = false,
      InjectedFailure fail_as = InjectedFailure::kReturned)
      : stall_(stall),
        fail_step_(fail_step),
        fail_after_boundary_(fail_after_boundary),
        fail_as_(fail_as) {}

  absl::StatusOr<at::Tensor> Run(engine::RankContext& context) override;
  // UNIMPLEMENTED: it has no VAE (the rank loop tests never decode).
  absl::StatusOr<at::Tensor> Decode(const v1::InputConfig& config,
                                    const at::Tensor& latents,
                                    engine::StageTimings& timings) override;

 private:
  absl::Duration stall_;
  int fail_step_;
  bool fail_after_boundary_;
  InjectedFailure fail_as_;
};

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_INTEGRATION_SHARD_GATHER_PROGRAM_H_
