#include "core/engine/buffer_plan.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/config/derived_shapes.h"

namespace ditserve::engine {

const BufferSpec* BufferPlan::Find(absl::string_view name) const {
  for (const BufferSpec& buffer : buffers) {
    if (buffer.name == name) return &buffer;
  }
  return nullptr;
}

namespace {

// A transformer output of `channels` per latent pixel in the unpacked
// layout: a video's with a channel axis after the frames.
std::vector<int64_t> TransformerOutputShape(const v1::DerivedShapes& shapes,
                                            std::vector<int64_t> leading,
                                            int64_t channels) {
  std::vector<int64_t> shape = LatentsShape(shapes, std::move(leading));
  shape[shape.size() - 3] = channels;
  return shape;
}

}  // namespace

std::string PatchBuffer(absl::string_view buffer, int patch) {
  return absl::StrCat(buffer, "/patch", patch);
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

bool GathersSequenceShards(const v1::ParallelConfig& parallel) {
  return parallel.ring_degree() * parallel.ulysses_degree() > 1 &&
         parallel.pipefusion_degree() == 1;
}

std::vector<int64_t> LatentsShape(const v1::DerivedShapes& shapes,
                                  std::vector<int64_t> leading) {
  std::vector<int64_t> shape = std::move(leading);
  shape.insert(shape.end(), shapes.image_latent_shape().begin(),
               shapes.image_latent_shape().end());
  return shape;
}

absl::StatusOr<BufferPlan> PlanBuffers(
    const v1::InputConfig& config, const dist::MeshCoordinates& coordinates,
    const families::ModelDimensions& dimensions) {
  const v1::DerivedShapes& shapes = config.shapes();
  const v1::ParallelConfig& parallel = config.parallel();
  if (dimensions.hidden_size <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model hidden_size ", dimensions.hidden_size, " must be positive"));
  }
  if (shapes.dp_group_prompt_offsets_size() != parallel.dp_degree() + 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shapes.dp_group_prompt_offsets has ",
        shapes.dp_group_prompt_offsets_size(), " entries; dp_degree ",
        parallel.dp_degree(), " needs ", parallel.dp_degree() + 1));
  }
  const int64_t positive[] = {
      shapes.max_batch_per_dp_group(), shapes.branches_per_cfg_rank(),
      shapes.shard_tokens(),           shapes.latent_channels(),
      shapes.latent_height(),          shapes.latent_width()};
  const char* names[] = {"max_batch_per_dp_group", "branches_per_cfg_rank",
                         "shard_tokens",           "latent_channels",
                         "latent_height",          "latent_width"};
  for (int i = 0; i < 6; ++i) {
    if (positive[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shapes.", names[i], " ", positive[i], " must be positive"));
    }
  }
  if (shapes.image_latent_shape_size() < 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shapes.image_latent_shape has ", shapes.image_latent_shape_size(),
        " entries; expected channels, height and width (and "
        "frames first for video)"));
  }

  const int64_t rows =
      int64_t{shapes.max_batch_per_dp_group()} * shapes.branches_per_cfg_rank();
  const int64_t sp =
      int64_t{parallel.ring_degree()} * parallel.ulysses_degree();
  const std::string rows_by = absl::StrCat(
      "shapes.max_batch_per_dp_group ", shapes.max_batch_per_dp_group(),
      " × shapes.branches_per_cfg_rank ", shapes.branches_per_cfg_rank());
  const std::string tokens_by = absl::StrCat(
      "shapes.shard_tokens ", shapes.shard_tokens(), " (from generated height ",
      shapes.generated_height(), ", width ", shapes.generated_width(),
      ", max_sequence_length ", config.max_sequence_length(), ", ring ",
      parallel.ring_degree(), " × ulysses ", parallel.ulysses_degree(), ")");
  const std::string hidden_by =
      absl::StrCat("model hidden_size ", dimensions.hidden_size);
  const std::string latent_by =
      absl::StrCat("shapes.image_latent_shape ",
                   ShapeString({shapes.image_latent_shape().begin(),
                                shapes.image_latent_shape().end()}),
                   " (from generated height ", shapes.generated_height(),
                   ", width ", shapes.generated_width(), ", latent_frames ",
                   shapes.latent_frames(), ")");

  const std::string channels_by = absl::StrCat(
      "model token_output_channels ", dimensions.token_output_channels);

  BufferPlan plan;
  if (GathersSequenceShards(parallel)) {
    if (dimensions.token_output_channels <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model token_output_channels ", dimensions.token_output_channels,
          " must be positive to plan the gather of ring ",
          parallel.ring_degree(), " × ulysses ", parallel.ulysses_degree()));
    }
    plan.buffers.push_back(
        {std::string(kSequenceGather),
         {sp, rows, shapes.shard_tokens(), dimensions.token_output_channels},
         absl::StrCat("ring ", parallel.ring_degree(), " × ulysses ",
                      parallel.ulysses_degree(), "; ", rows_by, "; ", tokens_by,
                      "; ", channels_by)});
  }
  if (parallel.cfg_degree() > 1) {
    if (dimensions.transformer_out_channels <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("model transformer_out_channels ",
                       dimensions.transformer_out_channels,
                       " must be positive to plan the exchange of cfg_degree ",
                       parallel.cfg_degree()));
    }
    plan.buffers.push_back(
        {std::string(kCfgBranchGather),
         TransformerOutputShape(shapes, {parallel.cfg_degree(), rows},
                                dimensions.transformer_out_channels),
         absl::StrCat("cfg_degree ", parallel.cfg_degree(), "; ", rows_by,
                      "; model transformer_out_channels ",
                      dimensions.transformer_out_channels, "; ", latent_by)});
  }
  const int stages = parallel.pipefusion_degree();
  if (stages > 1) {
    if (dimensions.token_output_channels <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model token_output_channels ", dimensions.token_output_channels,
          " must be positive to plan the stages of pipefusion_degree ",
          stages));
    }
    // Under sequence parallelism each rank passes its share of the image
    // tokens along its pp group.
    const auto share = [sp](int tokens) {
      return config::PipeFusionShardOf(tokens, static_cast<int>(sp), 0).tokens;
    };
    const std::string image_by = absl::StrCat(
        "shapes.image_tokens ", shapes.image_tokens(), " (from height ",
        config.height(), ", width ", config.width(), ") shared by ring ",
        parallel.ring_degree(), " × ulysses ", parallel.ulysses_degree());
    if (coordinates.pp > 0) {
      if (dimensions.stages_pass_text_stream) {
        plan.buffers.push_back(
            {std::string(kStageTextStream),
             {rows, shapes.text_tokens(), dimensions.hidden_size},
             absl::StrCat(rows_by, "; shapes.text_tokens ",
                          shapes.text_tokens(), " (from max_sequence_length ",
                          config.max_sequence_length(), "); ", hidden_by)});
      }
      plan.buffers.push_back(
          {std::string(kStageImageStream),
           {rows, share(shapes.image_tokens()), dimensions.hidden_size},
           absl::StrCat(rows_by, "; ", image_by, "; ", hidden_by)});
    }
    if (coordinates.pp < stages - 1) {
      plan.buffers.push_back(
          {std::string(kStageNoisePrediction),
           {rows, share(shapes.image_tokens()),
            dimensions.token_output_channels},
           absl::StrCat(rows_by, "; ", image_by, "; ", channels_by)});
    }
    // Planned also for requests whose steps are all warm-up steps: the
    // step count is not part of the shape key, so the next request of the
    // same shape may run the patch pipeline in these buffers.
    const auto& offsets = shapes.pipefusion_patch_token_offsets();
    if (offsets.size() != parallel.num_pipeline_patch() + 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shapes.pipefusion_patch_token_offsets has ", offsets.size(),
          " entries; num_pipeline_patch ", parallel.num_pipeline_patch(),
          " needs ", parallel.num_pipeline_patch() + 1));
    }
    for (int patch = 0; patch + 1 < offsets.size(); ++patch) {
      const int64_t tokens = share(offsets[patch + 1] - offsets[patch]);
      const std::string patch_by = absl::StrCat(
          rows_by, "; shapes.pipefusion_patch_token_offsets[", patch, ", ",
          patch + 1, "] = ", offsets[patch], ", ", offsets[patch + 1],
          " (num_pipeline_patch ", parallel.num_pipeline_patch(),
          ") shared by ring ", parallel.ring_degree(), " × ulysses ",
          parallel.ulysses_degree());
      if (coordinates.pp > 0) {
        plan.buffers.push_back({PatchBuffer(kStageImageStream, patch),
                                {rows, tokens, dimensions.hidden_size},
                                absl::StrCat(patch_by, "; ", hidden_by)});
      }
      if (coordinates.pp < stages - 1) {
        plan.buffers.push_back(
            {PatchBuffer(kStageNoisePrediction, patch),
             {rows, tokens, dimensions.token_output_channels},
             absl::StrCat(patch_by, "; ", channels_by)});
      }
    }
  }
  const bool is_rank_zero = coordinates == dist::MeshCoordinates{};
  if (is_rank_zero) {
    plan.buffers.push_back(
        {std::string(kDpLatentsGather),
         LatentsShape(shapes,
                      {parallel.dp_degree(), shapes.max_batch_per_dp_group()}),
         absl::StrCat("dp_degree ", parallel.dp_degree(), "; ",
                      "shapes.max_batch_per_dp_group ",
                      shapes.max_batch_per_dp_group(), "; ", latent_by)});
    const int prompts = shapes.dp_group_prompt_offsets(parallel.dp_degree());
    plan.buffers.push_back(
        {std::string(kOutputLatents), LatentsShape(shapes, {prompts}),
         absl::StrCat("shapes.dp_group_prompt_offsets last entry ", prompts,
                      "; ", latent_by)});
  }
  return plan;
}

}  // namespace ditserve::engine
