#include "core/engine/flux_rank_pipeline.h"

#include <torch/torch.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/engine/buffer_plan.h"
#include "core/engine/dp_gather.h"
#include "core/engine/sequence_parallel_for.h"
#include "core/pipelines/flux/flux_latents.h"
#include "core/pipelines/flux/flux_sequence_parallel.h"

namespace ditserve::engine {
namespace {

absl::string_view BufferOf(pipelines::FluxStageTensor tensor) {
  switch (tensor) {
    case pipelines::FluxStageTensor::kTextStream:
      return kStageTextStream;
    case pipelines::FluxStageTensor::kImageStream:
      return kStageImageStream;
    case pipelines::FluxStageTensor::kNoisePrediction:
      return kStageNoisePrediction;
  }
  return "";
}

// The PipeFusion stages of this rank's group when pp > 1, else nullopt.
// Stages receive into the planned buffers; a dp group with fewer prompts
// than the largest one uses the leading rows of buffers planned for
// max_batch_per_dp_group rows.
std::optional<pipelines::FluxPipelineStages> StagesFor(
    PipelineContext& context,
    const std::shared_ptr<parallel::StaleKvAttention>& stale_kv) {
  if (context.mesh.Degree(dist::Axis::kPp) == 1) return std::nullopt;
  pipelines::FluxPipelineStages stages;
  stages.group = {.group = context.groups.group(dist::Axis::kPp),
                  .context = context.collective_on(dist::Axis::kPp)};
  const int64_t max_rows = context.config.shapes().max_batch_per_dp_group();
  ReceiveBuffers& buffers = context.buffers;
  stages.receive_buffer =
      [&buffers, max_rows](
          pipelines::FluxStageTensor tensor, int patch,
          const std::vector<int64_t>& shape) -> absl::StatusOr<at::Tensor> {
    const std::string name = patch == pipelines::kWholeSequence
                                 ? std::string(BufferOf(tensor))
                                 : PatchBuffer(BufferOf(tensor), patch);
    if (shape.empty() || shape[0] > max_rows) {
      return absl::InternalError(absl::StrCat(
          "incoming ", name, " of shape ", ShapeString(shape),
          " has more rows than shapes.max_batch_per_dp_group ", max_rows));
    }
    std::vector<int64_t> planned = shape;
    planned[0] = max_rows;
    absl::StatusOr<at::Tensor> buffer = buffers.ForIncoming(name, planned);
    if (!buffer.ok()) return buffer.status();
    return buffer->narrow(0, 0, shape[0]);
  };
  stages.stale_kv = stale_kv;
  stages.warmup_steps = context.config.parallel().warmup_steps();
  const auto& offsets =
      context.config.shapes().pipefusion_patch_token_offsets();
  stages.patch_offsets.assign(offsets.begin(), offsets.end());
  return stages;
}

}  // namespace

FluxRankPipeline::FluxRankPipeline(
    std::unique_ptr<pipelines::FluxPromptEncoder> encoder,
    std::unique_ptr<pipelines::FluxPipeline> flux,
    std::shared_ptr<parallel::StaleKvAttention> stale_kv)
    : encoder_(std::move(encoder)),
      flux_(std::move(flux)),
      stale_kv_(std::move(stale_kv)) {}

absl::StatusOr<at::Tensor> FluxRankPipeline::Generate(PipelineContext& context,
                                                      int first, int end) {
  const v1::InputConfig& config = context.config;
  std::vector<std::string> prompts(config.prompt().begin() + first,
                                   config.prompt().begin() + end);
  pipelines::FluxRequest request;
  {
    ScopedStageTimer timer(context.timings, Stage::kTextEncode);
    absl::StatusOr<pipelines::FluxPromptEmbeddings> embeddings =
        encoder_->Encode(prompts, config.max_sequence_length());
    if (!embeddings.ok()) return embeddings.status();
    request.prompt_embeds = embeddings->prompt_embeds;
    request.pooled_prompt_embeds = embeddings->pooled_prompt_embeds;
  }
  request.height = config.height();
  request.width = config.width();
  request.num_inference_steps = config.num_inference_steps();
  request.guidance_scale = config.guidance_scale();
  request.seeds.assign(config.seeds().begin() + first,
                       config.seeds().begin() + end);

  ScopedStageTimer timer(context.timings, Stage::kDenoise);
  absl::StatusOr<std::optional<pipelines::SequenceParallel>> sequence_parallel =
      SequenceParallelFor(context);
  if (!sequence_parallel.ok()) return sequence_parallel.status();
  const std::optional<pipelines::FluxPipelineStages> stages =
      StagesFor(context, stale_kv_);
  absl::StatusOr<at::Tensor> latents = flux_->InitialLatents(request);
  if (!latents.ok()) return latents.status();
  absl::StatusOr<at::Tensor> packed = flux_->Denoise(
      request, *std::move(latents),
      [&context](const pipelines::FluxStepEvent& event) {
        return context.step_boundary(event.step);
      },
      sequence_parallel->has_value() ? &**sequence_parallel : nullptr,
      stages.has_value() ? &*stages : nullptr);
  if (!packed.ok()) return packed.status();
  const v1::DerivedShapes& shapes = config.shapes();
  return pipelines::UnpackLatents(
      *packed, {shapes.latent_height(), shapes.latent_width()});
}

absl::StatusOr<at::Tensor> FluxRankPipeline::Run(PipelineContext& context) {
  return RunDpGroup(context, [this, &context](int first, int end) {
    return Generate(context, first, end);
  });
}

absl::StatusOr<at::Tensor> FluxRankPipeline::Decode(
    const v1::InputConfig& config, const at::Tensor& latents,
    StageTimings& timings) {
  ScopedStageTimer timer(timings, Stage::kVaeDecode);
  torch::NoGradGuard no_grad;
  absl::StatusOr<pipelines::FluxDecodeOutput> decoded = flux_->Decode(
      pipelines::PackLatents(latents), config.height(), config.width());
  if (!decoded.ok()) return decoded.status();
  return decoded->images.rgb;
}

}  // namespace ditserve::engine
