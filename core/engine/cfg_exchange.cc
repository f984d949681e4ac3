#include "core/engine/cfg_exchange.h"

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "core/base/status_macros.h"
#include "core/dist/collective.h"
#include "core/dist/wire_view.h"
#include "core/engine/buffer_plan.h"

namespace ditserve::engine {
namespace {

// Both branches' outputs [2 × prompts, ...], negative first, from this
// rank's `own` [prompts, ...].
absl::StatusOr<at::Tensor> AllGatherBranches(RankContext& context, int prompts,
                                             const at::Tensor& own) {
  const int cfg = context.mesh.Degree(dist::Axis::kCfg);
  const v1::DerivedShapes& shapes = context.config.shapes();
  const int64_t rows =
      int64_t{shapes.max_batch_per_dp_group()} * shapes.branches_per_cfg_rank();
  std::vector<int64_t> gathered_shape = {cfg, rows};
  gathered_shape.insert(gathered_shape.end(), own.sizes().begin() + 1,
                        own.sizes().end());
  ASSIGN_OR_RETURN(at::Tensor gathered, context.buffers.ForIncoming(
                                            kCfgBranchGather, gathered_shape));
  at::Tensor padded =
      torch::zeros(gathered.sizes().slice(1), gathered.options());
  padded.narrow(0, 0, prompts).copy_(own);
  std::vector<at::Tensor> inputs = {dist::WireView(padded)};
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int branch = 0; branch < cfg; ++branch) {
    outputs[0].push_back(dist::WireView(gathered[branch]));
  }
  const dist::ProcessGroupPtr& group = context.groups.group(dist::Axis::kCfg);
  absl::Status status = dist::RunCollective(
      "all-gather of cfg branches", context.collective_on(dist::Axis::kCfg),
      [&] { return group->allgather(outputs, inputs); });
  if (!status.ok()) return status;
  std::vector<at::Tensor> branches;
  for (int branch = 0; branch < cfg; ++branch) {
    branches.push_back(gathered[branch].narrow(0, 0, prompts));
  }
  // A new tensor: the buffer is overwritten by the next step.
  return at::cat(branches, /*dim=*/0).to(own.options());
}

}  // namespace

std::optional<parallel::CfgSplit> CfgSplitFor(RankContext& context,
                                              int prompts) {
  if (context.mesh.Degree(dist::Axis::kCfg) == 1) return std::nullopt;
  return parallel::CfgSplit{
      .branch = context.mesh.CoordinatesOf(context.rank).cfg,
      .exchange = [&context, prompts](const at::Tensor& own) {
        return AllGatherBranches(context, prompts, own);
      }};
}

}  // namespace ditserve::engine
