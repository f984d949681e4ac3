#ifndef DITSERVE_CORE_ENGINE_BUFFER_PLAN_H_
#define DITSERVE_CORE_ENGINE_BUFFER_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dist/mesh.h"
#include "core/families/model_dimensions.h"
#include "ditserve/v1/input_config.pb.h"

namespace ditserve::engine {

// Buffer names, shared by the plan and the rank programs that receive into
// them.
// Sequence parallelism (GathersSequenceShards): the sp group's transformer
// outputs of one forward gathered on every sp rank, [sp, rows, shard_tokens,
// token_output_channels] with rows = max_batch_per_dp_group ×
// branches_per_cfg_rank; a forward of fewer rows gathers into the leading
// rows.
inline constexpr absl::string_view kSequenceGather = "sequence_gather";
// CFG parallel (cfg_degree 2) only: each cfg rank's transformer output of
// one step, gathered on both, [cfg, rows, transformer_out_channels,
// latent_height, latent_width] with rows as for the sequence shard.
inline constexpr absl::string_view kCfgBranchGather = "cfg_branch_gather";
// PipeFusion stages after the first: the previous stage's text stream
// [rows, text_tokens, hidden] (models whose stages pass one) and image
// stream [rows, image_tokens, hidden], with rows = max_batch_per_dp_group ×
// branches_per_cfg_rank; a group with fewer prompts receives into the
// leading rows. Under sequence parallelism image tokens here and below are
// a rank's share of them (config::PipeFusionShardOf).
inline constexpr absl::string_view kStageTextStream = "stage_text_stream";
inline constexpr absl::string_view kStageImageStream = "stage_image_stream";
// PipeFusion stages before the last: the last stage's noise prediction
// [rows, image_tokens, token_output_channels], rows and leading rows as
// above.
inline constexpr absl::string_view kStageNoisePrediction =
    "stage_noise_prediction";
// The buffer of image patch `patch` of the patch pipeline (steps after
// warmup_steps) for `buffer` = kStageImageStream or kStageNoisePrediction:
// its rows are the patch's image tokens
// (shapes.pipefusion_patch_token_offsets). The text stream of a patch uses
// kStageTextStream.
std::string PatchBuffer(absl::string_view buffer, int patch);
// Rank 0 only: each dp group's latents, [dp, max_batch_per_dp_group,
// ...shapes.image_latent_shape].
inline constexpr absl::string_view kDpLatentsGather = "dp_latents_gather";
// Rank 0 only: the final latents of every prompt in request order,
// [prompts, ...shapes.image_latent_shape].
inline constexpr absl::string_view kOutputLatents = "output_latents";

// One buffer a rank receives into.
struct BufferSpec {
  std::string name;
  std::vector<int64_t> shape;
  // The config fields (with their values) that determined `shape`, for
  // error messages.
  std::string sized_by;
};

// Every receive buffer of one rank for one shape key.
struct BufferPlan {
  std::vector<BufferSpec> buffers;

  // nullptr when this rank has no buffer of that name.
  const BufferSpec* Find(absl::string_view name) const;
};

// Whether every transformer forward is split over the sp = ring × ulysses
// group and its outputs gathered: sp above 1 without PipeFusion, whose
// stages split each forward themselves.
bool GathersSequenceShards(const v1::ParallelConfig& parallel);

// The plan of the rank at `coordinates`: a pure function of its arguments.
// INVALID_ARGUMENT when the config's derived shapes are inconsistent with
// the mesh (e.g. a dp offset table of the wrong length) or a dimension is
// not positive.
absl::StatusOr<BufferPlan> PlanBuffers(
    const v1::InputConfig& config, const dist::MeshCoordinates& coordinates,
    const families::ModelDimensions& dimensions);

// "[2, 144, 8]".
std::string ShapeString(const std::vector<int64_t>& shape);

// `leading` followed by shapes.image_latent_shape: the unpacked latents.
std::vector<int64_t> LatentsShape(const v1::DerivedShapes& shapes,
                                  std::vector<int64_t> leading);

}  // namespace ditserve::engine

#endif  // DITSERVE_CORE_ENGINE_BUFFER_PLAN_H_
