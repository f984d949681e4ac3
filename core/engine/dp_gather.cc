#include "core/engine/dp_gather.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/base/guarded.h"
#include "core/base/status_macros.h"
#include "core/dist/collective.h"
#include "core/dist/collective_failure.h"
#include "core/dist/wire_view.h"
#include "core/engine/buffer_plan.h"
#include "spdlog/spdlog.h"

namespace ditserve::engine {

namespace {

// `rows` (undefined for none) in a [max_batch_per_dp_group, ...] tensor on
// the compute device, whose data-plane group gathers it; the rows past the
// group's prompts stay 0.
at::Tensor PaddedGroupLatents(const RankContext& context,
                              const at::Tensor& rows) {
  const v1::DerivedShapes& shapes = context.config.shapes();
  at::Tensor padded =
      torch::zeros(LatentsShape(shapes, {shapes.max_batch_per_dp_group()}),
                   at::device(context.buffers.options().device()));
  if (rows.defined()) padded.narrow(0, 0, rows.size(0)).copy_(rows);
  return padded;
}

// What a dp group that failed sends for its prompts: NaN, which no preview
// decodes (server::PartialImageDecoder) and no output keeps.
at::Tensor FailedGroupLatents(const RankContext& context) {
  const auto [first, end] = DpGroupPrompts(context);
  return at::full(LatentsShape(context.config.shapes(), {end - first}),
                  std::numeric_limits<float>::quiet_NaN(),
                  at::device(context.buffers.options().device()));
}

// `allocate`'s latents, or RESOURCE_EXHAUSTED. Caught here rather than at
// Engine::Run's boundary, which would end the run without this rank's part
// in the gathers and step boundaries the other dp groups' ranks are in, and
// on the failure path without the failure being handled.
template <typename Allocate>
absl::StatusOr<at::Tensor> AllocateLatents(absl::string_view what,
                                           Allocate&& allocate) {
  return base::GuardedAs(absl::StatusCode::kResourceExhausted, what,
                         std::forward<Allocate>(allocate));
}

// AllocateLatents for a rank that leaves the run when it fails. The other
// dp groups' ranks, if any, then wait for it in a gather or step boundary
// until the collective timeout, so the failure says that the group must be
// re-formed.
template <typename Allocate>
absl::StatusOr<at::Tensor> AllocateOrLeave(const RankContext& context,
                                           absl::string_view what,
                                           Allocate&& allocate) {
  absl::StatusOr<at::Tensor> latents =
      AllocateLatents(what, std::forward<Allocate>(allocate));
  if (latents.ok() || context.config.parallel().dp_degree() == 1) {
    return latents;
  }
  return dist::MarkCollectiveFailure(latents.status());
}

// GatherPartialLatents of latents PaddedGroupLatents padded.
absl::Status GatherPaddedPartialLatents(RankContext& context, int step,
                                        const at::Tensor& padded) {
  // Only now: a rank that failed before joining still owes the gather.
  ++context.partial_gathers_entered;
  ASSIGN_OR_RETURN(at::Tensor gathered, GatherDpLatents(context, padded));
  if (context.rank == 0) context.partial_latents(step + 1, std::move(gathered));
  return absl::OkStatus();
}

// The step boundaries from 0-based `first_step` on, with the previews'
// gathers of `padded` (PaddedGroupLatents), of a dp group that denoises
// nothing.
absl::Status FollowSteps(RankContext& context, int first_step,
                         const at::Tensor& padded) {
  for (int step = first_step; step < context.config.num_inference_steps();
       ++step) {
    RETURN_IF_ERROR(context.step_boundary(step));
    if (IsPartialImageStep(context.config, step)) {
      RETURN_IF_ERROR(GatherPaddedPartialLatents(context, step, padded));
    }
  }
  return absl::OkStatus();
}

// `failure`, still marked as a collective failure when what the rank did
// after it (`later`) failed in a collective, so that the group is re-formed.
absl::Status KeepCollectiveFailure(absl::Status failure,
                                   const absl::Status& later) {
  if (!dist::IsCollectiveFailure(later)) return failure;
  return dist::MarkCollectiveFailure(absl::Status(
      failure.code(),
      absl::StrCat(failure.message(), "; then ", later.message())));
}

// This rank's dp group failed with `failure` between step boundaries. The
// other dp groups share only the control group and the latents gathers with
// it, and they go on to their next boundary: were this rank to go straight
// to the rank reports, the two would wait in different collectives until
// one timed out, and the whole rank group would be re-formed. So rank 0,
// which decides the boundaries, stops every rank at the next one. Every
// failed rank first posts its failure: rank 0 reads it at the next boundary
// it decides and stops every rank there, and the rank's dp group peers,
// which may wait for it in a collective of the group that it never joins,
// leave that wait on it (their watchdogs read it) rather than at the
// collective timeout. Until the stop a rank other than 0 takes part in the
// run, sending NaN for its prompts; both first join a preview gather the
// others may already be in. The run fails with `failure` when the reports
// are gathered.
absl::StatusOr<at::Tensor> FailInStep(RankContext& context,
                                      absl::Status failure) {
  const StepProgress progress = context.step_progress();
  // Every rank stopped at that boundary together.
  if (progress.stopped) return failure;
  const v1::InputConfig& config = context.config;
  const int steps = config.num_inference_steps();
  // First, so that rank 0 reads it at the next boundary it decides.
  if (absl::Status posted = context.post_failure(failure); !posted.ok()) {
    spdlog::warn(
        "rank {}: {}; ranks waiting for this one wait until their collective "
        "timeout, and the other dp groups run to the end",
        context.rank, posted.ToString());
  }
  // Failed between the last agreed boundary and its preview gather, which
  // the other groups are in.
  const int last_step = progress.agreed_steps - 1;
  const auto previews_agreed = std::count_if(
      config.partial_image_steps().begin(), config.partial_image_steps().end(),
      [&](int preview_step) { return preview_step <= progress.agreed_steps; });
  const bool owes_preview = last_step >= 0 &&
                            IsPartialImageStep(config, last_step) &&
                            context.partial_gathers_entered < previews_agreed;
  const bool stops_run = context.rank == 0 && progress.agreed_steps < steps;
  // Rank 0 stopping the run needs the NaN rows only for a preview it owes.
  // A rank short of memory may not have them, and without them it cannot
  // take its part in the remaining steps: the group is re-formed. Padded
  // once here, so that no gather after it allocates.
  at::Tensor failed_latents;
  if (owes_preview || !stops_run) {
    absl::StatusOr<at::Tensor> allocated =
        AllocateLatents("the failed group's NaN latents", [&] {
          return PaddedGroupLatents(context, FailedGroupLatents(context));
        });
    if (!allocated.ok()) {
      return dist::MarkCollectiveFailure(absl::Status(
          failure.code(), absl::StrCat(failure.message(), "; then ",
                                       allocated.status().message())));
    }
    failed_latents = *std::move(allocated);
  }
  if (owes_preview) {
    absl::Status owed =
        GatherPaddedPartialLatents(context, last_step, failed_latents);
    if (!owed.ok()) return KeepCollectiveFailure(failure, owed);
  }
  if (stops_run) {
    return KeepCollectiveFailure(
        failure, context.stop_at_boundary(progress.agreed_steps));
  }
  spdlog::warn(
      "rank {}: request {} failed during step {} of {}; taking part in the "
      "other dp groups' remaining steps: {}",
      context.rank, config.request_id(), progress.agreed_steps + 1, steps,
      failure.ToString());
  absl::Status followed =
      FollowSteps(context, progress.agreed_steps, failed_latents);
  if (followed.ok()) {
    followed = GatherDpLatents(context, failed_latents).status();
  }
  return KeepCollectiveFailure(failure, followed);
}

}  // namespace

std::pair<int, int> DpGroupPrompts(const RankContext& context) {
  const v1::DerivedShapes& shapes = context.config.shapes();
  const int group = context.mesh.CoordinatesOf(context.rank).dp;
  return {shapes.dp_group_prompt_offsets(group),
          shapes.dp_group_prompt_offsets(group + 1)};
}

absl::StatusOr<at::Tensor> GatherDpLatents(RankContext& context,
                                           const at::Tensor& group_latents) {
  const v1::InputConfig& config = context.config;
  const v1::DerivedShapes& shapes = config.shapes();
  const dist::MeshCoordinates coordinates =
      context.mesh.CoordinatesOf(context.rank);
  if (!(dist::MeshCoordinates{.dp = coordinates.dp} == coordinates)) {
    return at::Tensor();
  }
  const int dp = config.parallel().dp_degree();
  std::vector<int64_t> gathered_shape = {dp};
  gathered_shape.insert(gathered_shape.end(), group_latents.sizes().begin(),
                        group_latents.sizes().end());
  ASSIGN_OR_RETURN(
      const at::Tensor input,
      AllocateOrLeave(context, "the dp group's latents in the wire dtype", [&] {
        return group_latents.to(context.buffers.options().dtype()).contiguous();
      }));
  std::vector<at::Tensor> inputs = {dist::WireView(input)};
  std::vector<std::vector<at::Tensor>> outputs;
  at::Tensor gathered;
  if (context.rank == 0) {
    ASSIGN_OR_RETURN(gathered, context.buffers.ForIncoming(kDpLatentsGather,
                                                           gathered_shape));
    outputs.resize(1);
    for (int group = 0; group < dp; ++group) {
      outputs[0].push_back(dist::WireView(gathered[group]));
    }
  }
  if (dp > 1) {
    const dist::ProcessGroupPtr& dp_group =
        context.groups.group(dist::Axis::kDp);
    c10d::GatherOptions options;
    options.rootRank = 0;
    absl::Status status = dist::RunCollective(
        "gather of dp latents", context.collective_on(dist::Axis::kDp),
        [&] { return dp_group->gather(outputs, inputs, options); });
    if (!status.ok()) return status;
  } else if (context.rank == 0) {
    gathered[0].copy_(group_latents);
  }
  if (context.rank != 0) return at::Tensor();

  ASSIGN_OR_RETURN(at::Tensor output, context.buffers.Get(kOutputLatents));
  for (int group = 0; group < dp; ++group) {
    const int first = shapes.dp_group_prompt_offsets(group);
    const int end = shapes.dp_group_prompt_offsets(group + 1);
    for (int prompt = first; prompt < end; ++prompt) {
      output[prompt].copy_(gathered[group][prompt - first]);
    }
  }
  // The buffer is reused by the next request of this shape.
  return output.clone();
}

std::vector<std::string> PromptRange(
    const google::protobuf::RepeatedPtrField<std::string>& texts, int first,
    int end) {
  return std::vector<std::string>(texts.begin() + first, texts.begin() + end);
}

absl::StatusOr<at::Tensor> RunDpGroup(RankContext& context,
                                      const DpGroupGenerator& generate) {
  const v1::DerivedShapes& shapes = context.config.shapes();
  const auto [first, end] = DpGroupPrompts(context);
  torch::NoGradGuard no_grad;
  at::Tensor padded;
  if (end > first) {
    // Guarded here, so that what the generator throws takes the failure
    // path every other rank expects rather than leaving them waiting.
    absl::StatusOr<at::Tensor> generated =
        base::Guarded("generating the dp group's prompts",
                      [&] { return generate(first, end); });
    if (!generated.ok()) return FailInStep(context, generated.status());
    ASSIGN_OR_RETURN(
        padded, AllocateOrLeave(context, "the dp group's padded latents", [&] {
          return PaddedGroupLatents(context, *generated);
        }));
  } else {
    // The zeros its previews' gathers take are also its final ones.
    ASSIGN_OR_RETURN(
        padded, AllocateOrLeave(context, "the dp group's padded latents", [&] {
          return PaddedGroupLatents(context, at::Tensor());
        }));
    RETURN_IF_ERROR(FollowSteps(context, 0, padded));
  }
  ScopedStageTimer timer(context.timings, Stage::kGather);
  return GatherDpLatents(context, padded);
}

bool IsPartialImageStep(const v1::InputConfig& config, int step) {
  const auto& steps = config.partial_image_steps();
  return std::find(steps.begin(), steps.end(), step + 1) != steps.end();
}

absl::Status GatherPartialLatents(RankContext& context, int step,
                                  const at::Tensor& denoised) {
  // Not a reason to leave: the failure goes to FailInStep, which joins this
  // gather with NaN latents.
  ASSIGN_OR_RETURN(const at::Tensor padded,
                   AllocateLatents("the dp group's padded latents", [&] {
                     return PaddedGroupLatents(context, denoised);
                   }));
  return GatherPaddedPartialLatents(context, step, padded);
}

}  // namespace ditserve::engine
