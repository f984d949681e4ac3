#include "tests/integration/shard_gather_program.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/base/status_macros.h"
#include "core/engine/dp_gather.h"
#include "core/engine/sequence_parallel_for.h"
#include "core/engine/stage_timings.h"
#include "core/parallel/sequence_sharding.h"
#include "spdlog/spdlog.h"

namespace ditserve::testing {
namespace {

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

}  // namespace

absl::StatusOr<at::Tensor> ShardGatherProgram::Run(
    engine::RankContext& context) {
  const v1::InputConfig& config = context.config;
  const v1::DerivedShapes& shapes = config.shapes();
  const std::vector<int64_t> one_prompt = {
      shapes.latent_channels(), shapes.latent_height(), shapes.latent_width()};
  absl::StatusOr<at::Tensor> output = engine::RunDpGroup(
      context, [&](int first, int end) -> absl::StatusOr<at::Tensor> {
        engine::ScopedStageTimer timer(context.timings,
                                       engine::Stage::kDenoise);
        std::vector<at::Tensor> rows;
        for (int prompt = first; prompt < end; ++prompt) {
          rows.push_back(ExpectedLatents(config.seeds(prompt), one_prompt));
        }
        const at::Tensor latents = at::stack(rows);
        // The first run fails once, at fail_step_, before its boundary or
        // after it (before that step's preview gather).
        const auto fails_here = [&](int step, bool after_boundary) {
          if (step != fail_step_ || after_boundary != fail_after_boundary_) {
            return false;
          }
          fail_step_ = -1;
          return true;
        };
        for (int step = 0; step < config.num_inference_steps(); ++step) {
          if (stall_ > absl::ZeroDuration()) {
            // Tests act on the stall (HungRankZeroTest).
            spdlog::info("rank {}: stalling {} before the first all-gather",
                         context.rank, absl::FormatDuration(stall_));
            absl::SleepFor(stall_);
            stall_ = absl::ZeroDuration();
          }
          RETURN_IF_ERROR(GatherSequence(context, config.seeds(first)));
          for (const bool after_boundary : {false, true}) {
            if (fails_here(step, after_boundary)) {
              const std::string failure =
                  absl::StrCat("failure injected during step ", step + 1);
              TORCH_CHECK(fail_as_ != InjectedFailure::kThrown, failure);
              TORCH_CHECK_WITH(OutOfMemoryError,
                               fail_as_ != InjectedFailure::kOutOfMemory,
                               failure);
              return absl::InternalError(failure);
            }
            if (!after_boundary) {
              RETURN_IF_ERROR(context.step_boundary(step));
            }
          }
          if (engine::IsPartialImageStep(config, step)) {
            RETURN_IF_ERROR(
                engine::GatherPartialLatents(context, step, latents));
          }
        }
        return latents;
      });
  if (!output.ok() || context.rank != 0) return output;
  for (int prompt = 0; prompt < config.prompt_size(); ++prompt) {
    if (!at::equal((*output)[prompt],
                   ExpectedLatents(config.seeds(prompt), one_prompt))) {
      return absl::InternalError(absl::StrCat("latents of prompt ", prompt,
                                              " (seed ", config.seeds(prompt),
                                              ") differ after the dp gather"));
    }
  }
  return output;
}

absl::StatusOr<at::Tensor> ShardGatherProgram::Decode(
    const v1::InputConfig& /*config*/, const at::Tensor& /*latents*/,
    engine::StageTimings& /*timings*/) {
  return absl::UnimplementedError("ShardGatherProgram has no VAE to decode");
}

}  // namespace ditserve::testing
