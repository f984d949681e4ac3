#include "core/engine/flux_rank_program.h"

#include <torch/torch.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/status_macros.h"
#include "core/engine/dp_gather.h"
#include "core/engine/pipefusion_stages_for.h"
#include "core/engine/sequence_parallel_for.h"
#include "core/pipelines/flux/flux_latents.h"
#include "core/pipelines/flux/flux_sequence_parallel.h"

namespace ditserve::engine {

FluxRankProgram::FluxRankProgram(
    std::unique_ptr<pipelines::FluxPromptEncoder> encoder,
    std::unique_ptr<pipelines::FluxPipeline> flux,
    std::shared_ptr<parallel::StaleKvAttention> stale_kv)
    : encoder_(std::move(encoder)),
      flux_(std::move(flux)),
      stale_kv_(std::move(stale_kv)) {}

absl::StatusOr<at::Tensor> FluxRankProgram::Generate(RankContext& context,
                                                     int first, int end) {
  const v1::InputConfig& config = context.config;
  std::vector<std::string> prompts(config.prompt().begin() + first,
                                   config.prompt().begin() + end);
  pipelines::FluxRequest request;
  {
    ScopedStageTimer timer(context.timings, Stage::kTextEncode);
    ASSIGN_OR_RETURN(pipelines::FluxPromptEmbeddings embeddings,
                     encoder_->Encode(prompts, config.max_sequence_length()));
    request.prompt_embeds = embeddings.prompt_embeds;
    request.pooled_prompt_embeds = embeddings.pooled_prompt_embeds;
  }
  request.height = config.height();
  request.width = config.width();
  request.num_inference_steps = config.num_inference_steps();
  request.guidance_scale = config.guidance_scale();
  request.seeds.assign(config.seeds().begin() + first,
                       config.seeds().begin() + end);

  ScopedStageTimer timer(context.timings, Stage::kDenoise);
  ASSIGN_OR_RETURN(std::optional<pipelines::SequenceParallel> sequence_parallel,
                   SequenceParallelFor(context));
  ASSIGN_OR_RETURN(std::optional<pipelines::PipeFusionStages> stages,
                   StagesFor(context, stale_kv_));
  ASSIGN_OR_RETURN(at::Tensor latents, flux_->InitialLatents(request));
  ASSIGN_OR_RETURN(
      at::Tensor packed,
      flux_->Denoise(
          request, std::move(latents),
          [&context](const pipelines::FluxStepEvent& event) {
            return context.step_boundary(event.step);
          },
          sequence_parallel.has_value() ? &*sequence_parallel : nullptr,
          stages.has_value() ? &*stages : nullptr));
  const v1::DerivedShapes& shapes = config.shapes();
  return pipelines::UnpackLatents(
      packed, {shapes.latent_height(), shapes.latent_width()});
}

absl::StatusOr<at::Tensor> FluxRankProgram::Run(RankContext& context) {
  return RunDpGroup(context, [this, &context](int first, int end) {
    return Generate(context, first, end);
  });
}

absl::StatusOr<at::Tensor> FluxRankProgram::Decode(
    const v1::InputConfig& config, const at::Tensor& latents,
    StageTimings& timings) {
  ScopedStageTimer timer(timings, Stage::kVaeDecode);
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(pipelines::FluxDecodeOutput decoded,
                   flux_->Decode(pipelines::PackLatents(latents),
                                 config.height(), config.width()));
  return decoded.images.rgb;
}

}  // namespace ditserve::engine
