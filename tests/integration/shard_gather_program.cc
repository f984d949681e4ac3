#include "tests/integration/shard_gather_program.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/dist/collective.h"
#include "core/engine/buffer_plan.h"
#include "core/engine/sequence_parallel_for.h"
#include "core/engine/stage_timings.h"
#include "core/parallel/sequence_sharding.h"

namespace ditserve::testing {
namespace {

using engine::kDpLatentsGather;
using engine::kOutputLatents;

// What rank `rank` holds in its shard for a dp group whose first seed is
// `seed`: distinct per rank and seed, and computed identically everywhere.
at::Tensor ExpectedShard(uint64_t seed, int rank, at::IntArrayRef shape) {
  const int64_t count = c10::multiply_integers(shape);
  return (at::arange(count, at::kFloat) * 1e-3 +
          static_cast<double>(seed % 1000) + 1000.0 * (rank + 1))
      .reshape(shape);
}

// The latents of the prompt drawn with `seed`.
at::Tensor ExpectedLatents(uint64_t seed, at::IntArrayRef shape) {
  const int64_t count = c10::multiply_integers(shape);
  return (at::arange(count, at::kFloat) * 1e-4 +
          static_cast<double>(seed % 9973))
      .reshape(shape);
}

std::vector<int64_t> Prepend(int64_t first, at::IntArrayRef rest) {
  std::vector<int64_t> shape = {first};
  shape.insert(shape.end(), rest.begin(), rest.end());
  return shape;
}

// Fills this rank's shard of a forward's outputs, gathers the sp group's
// shards as every sequence-parallel forward does, into the planned buffer,
// and checks each one. Nothing to gather without sequence parallelism.
absl::Status GatherSequence(engine::RankContext& context, uint64_t dp_seed) {
  absl::StatusOr<std::optional<parallel::SequenceParallel>> split =
      engine::SequenceParallelFor(context);
  if (!split.ok()) return split.status();
  if (!split->has_value()) return absl::OkStatus();
  const parallel::SequenceParallel& sequence_parallel = **split;
  const parallel::SequenceSharding& sharding = sequence_parallel.sharding;
  // A whole forward's rows and channels, as the plan sized them.
  const at::IntArrayRef planned = sequence_parallel.gathered.sizes();
  const std::vector<int64_t> shard_shape = {planned[1], planned[2], planned[3]};
  const std::vector<int>& sp_ranks = context.groups.ranks(dist::Axis::kSp);
  absl::StatusOr<at::Tensor> gathered =
      sharding.Gather(sequence_parallel.group,
                      ExpectedShard(dp_seed, context.rank, shard_shape),
                      sequence_parallel.gathered);
  if (!gathered.ok()) return gathered.status();
  for (int index = 0; index < static_cast<int>(sp_ranks.size()); ++index) {
    const int64_t first = index * sharding.shard_tokens();
    const int64_t tokens =
        std::min(sharding.shard_tokens(), sharding.sequence_tokens() - first);
    if (tokens <= 0) continue;
    const at::Tensor expected =
        ExpectedShard(dp_seed, sp_ranks[index], shard_shape)
            .narrow(1, 0, tokens);
    if (!at::equal(gathered->narrow(1, first, tokens), expected)) {
      return absl::InternalError(absl::StrCat(
          "sequence shard gathered from rank ", sp_ranks[index],
          " differs from what that rank computes for seed ", dp_seed));
    }
  }
  return absl::OkStatus();
}

// Gathers each dp group's latents to rank 0 and places them by the dp
// offsets; returns the output on rank 0, an undefined tensor elsewhere.
absl::StatusOr<at::Tensor> GatherLatents(engine::RankContext& context) {
  const v1::InputConfig& config = context.config;
  const v1::DerivedShapes& shapes = config.shapes();
  const dist::MeshCoordinates coordinates =
      context.mesh.CoordinatesOf(context.rank);
  // Only the first rank of each dp replica holds its group's result.
  if (!(dist::MeshCoordinates{.dp = coordinates.dp} == coordinates)) {
    return at::Tensor();
  }
  const std::vector<int64_t> one_prompt = {
      shapes.latent_channels(), shapes.latent_height(), shapes.latent_width()};
  const int first = shapes.dp_group_prompt_offsets(coordinates.dp);
  const int end = shapes.dp_group_prompt_offsets(coordinates.dp + 1);
  at::Tensor latents = at::zeros(
      Prepend(shapes.max_batch_per_dp_group(), one_prompt), at::kFloat);
  for (int prompt = first; prompt < end; ++prompt) {
    latents[prompt - first].copy_(
        ExpectedLatents(config.seeds(prompt), one_prompt));
  }
  const dist::ProcessGroupPtr& dp = context.groups.group(dist::Axis::kDp);
  std::vector<at::Tensor> inputs = {latents};
  std::vector<std::vector<at::Tensor>> outputs;
  at::Tensor gathered;
  if (context.rank == 0) {
    absl::StatusOr<at::Tensor> planned = context.buffers.ForIncoming(
        kDpLatentsGather,
        Prepend(config.parallel().dp_degree(), latents.sizes()));
    if (!planned.ok()) return planned.status();
    gathered = *planned;
    outputs.resize(1);
    for (int group = 0; group < config.parallel().dp_degree(); ++group) {
      outputs[0].push_back(gathered[group]);
    }
  }
  c10d::GatherOptions options;
  options.rootRank = 0;
  absl::Status status = dist::RunCollective(
      "gather of dp latents", context.collective_on(dist::Axis::kDp),
      [&] { return dp->gather(outputs, inputs, options); });
  if (!status.ok()) return status;
  if (context.rank != 0) return at::Tensor();

  absl::StatusOr<at::Tensor> output = context.buffers.Get(kOutputLatents);
  if (!output.ok()) return output.status();
  for (int group = 0; group < config.parallel().dp_degree(); ++group) {
    const int group_first = shapes.dp_group_prompt_offsets(group);
    const int group_end = shapes.dp_group_prompt_offsets(group + 1);
    for (int prompt = group_first; prompt < group_end; ++prompt) {
      (*output)[prompt].copy_(gathered[group][prompt - group_first]);
    }
  }
  for (int prompt = 0; prompt < config.prompt_size(); ++prompt) {
    if (!at::equal((*output)[prompt],
                   ExpectedLatents(config.seeds(prompt), one_prompt))) {
      return absl::InternalError(absl::StrCat("latents of prompt ", prompt,
                                              " (seed ", config.seeds(prompt),
                                              ") differ after the dp gather"));
    }
  }
  return *output;
}

}  // namespace

absl::StatusOr<at::Tensor> ShardGatherProgram::Run(
    engine::RankContext& context) {
  const v1::InputConfig& config = context.config;
  const dist::MeshCoordinates coordinates =
      context.mesh.CoordinatesOf(context.rank);
  // A dp group without prompts (fewer prompts than groups) still takes part
  // in the sp gather; any seed both sides agree on will do.
  const int first = config.shapes().dp_group_prompt_offsets(coordinates.dp);
  const uint64_t dp_seed =
      first < config.seeds_size() ? config.seeds(first) : 0;
  {
    engine::ScopedStageTimer timer(context.timings, engine::Stage::kDenoise);
    for (int step = 0; step < config.num_inference_steps(); ++step) {
      absl::SleepFor(stall_);
      stall_ = absl::ZeroDuration();
      absl::Status status = GatherSequence(context, dp_seed);
      if (!status.ok()) return status;
      status = context.step_boundary(step);
      if (!status.ok()) return status;
    }
  }
  engine::ScopedStageTimer timer(context.timings, engine::Stage::kGather);
  return GatherLatents(context);
}

absl::StatusOr<at::Tensor> ShardGatherProgram::Decode(
    const v1::InputConfig& /*config*/, const at::Tensor& /*latents*/,
    engine::StageTimings& /*timings*/) {
  return absl::UnimplementedError("ShardGatherProgram has no VAE to decode");
}

}  // namespace ditserve::testing
