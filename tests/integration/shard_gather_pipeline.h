#ifndef DITSERVE_TESTS_INTEGRATION_SHARD_GATHER_PIPELINE_H_
#define DITSERVE_TESTS_INTEGRATION_SHARD_GATHER_PIPELINE_H_

#include <ATen/core/Tensor.h>

#include "absl/status/statusor.h"
#include "core/engine/pipeline.h"

namespace ditserve::testing {

// A pipeline that does real collective work through the plan's buffers
// without a model: every rank fills its sequence shard from (seed, rank) and
// all-gathers the sp group's shards into the planned gather buffer; the
// leaders of the dp groups fill their prompts' latents from each prompt's
// seed and gather them to rank 0, which places them by the dp offsets into
// the planned output. Every received value is checked against what its
// sender must have computed; a difference is INTERNAL naming the rank or
// prompt.
class ShardGatherPipeline : public engine::Pipeline {
 public:
  absl::StatusOr<at::Tensor> Run(engine::PipelineContext& context) override;
};

}  // namespace ditserve::testing

#endif  // DITSERVE_TESTS_INTEGRATION_SHARD_GATHER_PIPELINE_H_
