#include "core/engine/pipefusion_stages_for.h"

#include <torch/torch.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/engine/buffer_plan.h"
#include "core/engine/stage.h"

namespace ditserve::engine {
namespace {

absl::string_view BufferOf(parallel::StageTensor tensor) {
  switch (tensor) {
    case parallel::StageTensor::kTextStream:
      return kStageTextStream;
    case parallel::StageTensor::kImageStream:
      return kStageImageStream;
    case parallel::StageTensor::kNoisePrediction:
      return kStageNoisePrediction;
  }
  return "";
}

}  // namespace

absl::StatusOr<std::optional<parallel::PipeFusionStages>> StagesFor(
    RankContext& context,
    const std::shared_ptr<parallel::StaleKvAttention>& stale_kv) {
  if (context.mesh.Degree(dist::Axis::kPp) == 1) return std::nullopt;
  if (stale_kv == nullptr) {
    return absl::FailedPreconditionError(
        "pipefusion_degree > 1 but this rank's transformer was loaded without "
        "PipeFusion's StaleKvAttention");
  }
  parallel::PipeFusionStages stages;
  stages.group = {.group = context.groups.group(dist::Axis::kPp),
                  .context = context.collective_on(dist::Axis::kPp)};
  stages.feedback = {.group = context.groups.pp_feedback(),
                     .context = context.collective_on(dist::Axis::kPp)};
  stages.feedback.context.group_name = "pp feedback";
  const v1::DerivedShapes& shapes = context.config.shapes();
  const int64_t max_rows =
      int64_t{shapes.max_batch_per_dp_group()} * shapes.branches_per_cfg_rank();
  ReceiveBuffers& buffers = context.buffers;
  stages.receive_buffer =
      [&buffers, max_rows](
          parallel::StageTensor tensor, int patch,
          const std::vector<int64_t>& shape) -> absl::StatusOr<at::Tensor> {
    const std::string name = patch == parallel::kWholeSequence
                                 ? std::string(BufferOf(tensor))
                                 : PatchBuffer(BufferOf(tensor), patch);
    if (shape.empty() || shape[0] > max_rows) {
      return absl::InternalError(
          absl::StrCat("incoming ", name, " of shape ", ShapeString(shape),
                       " has more rows than shapes.max_batch_per_dp_group × "
                       "shapes.branches_per_cfg_rank = ",
                       max_rows));
    }
    std::vector<int64_t> planned = shape;
    planned[0] = max_rows;
    ASSIGN_OR_RETURN(at::Tensor buffer, buffers.ForIncoming(name, planned));
    return buffer.narrow(0, 0, shape[0]);
  };
  stages.stale_kv = stale_kv;
  stages.waited = [&timings = context.timings](double seconds) {
    timings.Add(Stage::kPipelineWait, seconds);
  };
  if (context.mesh.Degree(dist::Axis::kSp) > 1) {
    stages.sp =
        parallel::Group{.group = context.groups.group(dist::Axis::kSp),
                        .context = context.collective_on(dist::Axis::kSp)};
  }
  stages.warmup_steps = context.config.parallel().warmup_steps();
  stages.steps = context.config.num_inference_steps();
  const auto& offsets = shapes.pipefusion_patch_token_offsets();
  stages.patch_offsets.assign(offsets.begin(), offsets.end());
  return stages;
}

}  // namespace ditserve::engine
