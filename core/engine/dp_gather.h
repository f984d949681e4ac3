#ifndef DITSERVE_CORE_ENGINE_DP_GATHER_H_
#define DITSERVE_CORE_ENGINE_DP_GATHER_H_

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/engine/rank_program.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace ditserve::engine {

// Gathers every data-parallel group's final latents to rank 0 through the
// plan's dp_latents_gather buffer and returns them in request order
// ([prompts, channels, latent_height, latent_width], the plan's
// output_latents) on rank 0, an undefined tensor on other ranks.
// `group_latents` is this rank's group's result, [max_batch_per_dp_group,
// channels, latent_height, latent_width] with rows past the group's prompt
// count ignored; only the first rank of each dp replica (all other
// coordinates 0) sends, the others pass an undefined tensor and return.
absl::StatusOr<at::Tensor> GatherDpLatents(RankContext& context,
                                           const at::Tensor& group_latents);

// Whether 1-based step + 1 is one of config.partial_image_steps.
bool IsPartialImageStep(const v1::InputConfig& config, int step);

// Every rank, after the step boundary of 0-based `step` when
// IsPartialImageStep: gathers every dp group's `denoised` latents ([rows of
// its prompts, ...image_latent_shape]; undefined for a group without
// prompts) as GatherDpLatents does and hands them to context.partial_latents
// on rank 0.
absl::Status GatherPartialLatents(RankContext& context, int step,
                                  const at::Tensor& denoised);

// Prompt indices [first, end) the dp group of `rank` runs.
std::pair<int, int> DpGroupPrompts(const RankContext& context);

// Entries [first, end) of `texts`: a dp group's prompts or negative prompts.
std::vector<std::string> PromptRange(
    const google::protobuf::RepeatedPtrField<std::string>& texts, int first,
    int end);

// Final latents [end - first, channels, latent_height, latent_width] of the
// config's prompts [first, end).
using DpGroupGenerator =
    std::function<absl::StatusOr<at::Tensor>(int first, int end)>;

// This rank's share of a run: `generate` makes its dp group's latents (a
// group without prompts skips it but still takes part in every step
// decision, so that all ranks stop together), then GatherDpLatents. When
// `generate` fails between step boundaries, every rank stops at a later
// boundary that rank 0 decides (at once when its own group failed, else once
// it reads the post on the RunFailureBoard); until then the rank takes part
// in the step decisions and latents gathers (its prompts' latents NaN), so
// that the other dp groups' ranks are not left waiting for it. Returns that
// failure.
absl::StatusOr<at::Tensor> RunDpGroup(RankContext& context,
                                      const DpGroupGenerator& generate);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_DP_GATHER_H_
