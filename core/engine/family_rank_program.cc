#include "core/engine/family_rank_program.h"

#include <torch/torch.h>

#include <utility>
#include <vector>

#include "core/base/status_macros.h"
#include "core/engine/cfg_exchange.h"
#include "core/engine/denoise_loop.h"
#include "core/engine/dp_gather.h"
#include "core/engine/pipefusion_stages_for.h"
#include "core/engine/sequence_parallel_for.h"

namespace ditserve::engine {

FamilyRankProgram::FamilyRankProgram(
    std::unique_ptr<families::FamilyModel> model,
    std::shared_ptr<parallel::StaleKvAttention> stale_kv,
    std::shared_ptr<PromptEmbeddingCache> prompt_cache)
    : model_(std::move(model)),
      stale_kv_(std::move(stale_kv)),
      prompt_cache_(std::move(prompt_cache)) {}

absl::StatusOr<families::Conditioning> FamilyRankProgram::EncodePrompts(
    const std::vector<std::string>& prompts, int max_sequence_length) {
  return prompt_cache_->Encode(
      prompts, max_sequence_length,
      [this, max_sequence_length](const std::vector<std::string>& missing) {
        return model_->EncodePrompts(missing, max_sequence_length);
      });
}

absl::StatusOr<at::Tensor> FamilyRankProgram::Generate(RankContext& context,
                                                       int first, int end) {
  const v1::InputConfig& config = context.config;
  families::GenerationRequest request;
  {
    ScopedStageTimer timer(context.timings, Stage::kTextEncode);
    ASSIGN_OR_RETURN(request.prompt,
                     EncodePrompts(PromptRange(config.prompt(), first, end),
                                   config.max_sequence_length()));
    if (config.do_classifier_free_guidance()) {
      ASSIGN_OR_RETURN(
          request.negative_prompt,
          EncodePrompts(PromptRange(config.negative_prompt(), first, end),
                        config.max_sequence_length()));
    }
  }
  request.height = config.shapes().generated_height();
  request.width = config.shapes().generated_width();
  request.frames = config.num_frames();
  request.num_inference_steps = config.num_inference_steps();
  request.guidance_scale = config.guidance_scale();
  request.dynamic_cfg = config.use_dynamic_cfg();
  request.seeds.assign(config.seeds().begin() + first,
                       config.seeds().begin() + end);
  request.cfg_split = CfgSplitFor(context, end - first);
  ASSIGN_OR_RETURN(request.sequence_parallel, SequenceParallelFor(context));
  ASSIGN_OR_RETURN(request.stages, StagesFor(context, stale_kv_));

  ScopedStageTimer timer(context.timings, Stage::kDenoise);
  context.denoise_started();
  ASSIGN_OR_RETURN(at::Tensor latents, InitialLatents(*model_, request));
  ASSIGN_OR_RETURN(
      at::Tensor denoised,
      Denoise(*model_, request, std::move(latents),
              [&](const StepEvent& event) -> absl::Status {
                RETURN_IF_ERROR(context.step_boundary(event.step));
                if (!IsPartialImageStep(context.config, event.step)) {
                  return absl::OkStatus();
                }
                return GatherPartialLatents(
                    context, event.step,
                    model_->UnpackLatents(event.denoised, request));
              }));
  return model_->UnpackLatents(denoised, request);
}

absl::StatusOr<at::Tensor> FamilyRankProgram::Run(RankContext& context) {
  return RunDpGroup(context, [this, &context](int first, int end) {
    return Generate(context, first, end);
  });
}

absl::StatusOr<at::Tensor> FamilyRankProgram::Decode(
    const v1::InputConfig& config, const at::Tensor& latents,
    StageTimings& timings) {
  ScopedStageTimer timer(timings, Stage::kVaeDecode);
  torch::NoGradGuard no_grad;
  const families::DecodeRequest decode{.height = config.height(),
                                       .width = config.width(),
                                       .frames = config.num_frames(),
                                       .vae_tiling = config.vae_tiling()};
  // One output at a time: CPU kernels may round a value differently with
  // other images in the batch, and a client's images must be the same bytes
  // whatever they were batched with. It also bounds the decode's memory to
  // one output.
  std::vector<at::Tensor> rgb;
  for (int64_t output = 0; output < latents.size(0); ++output) {
    ASSIGN_OR_RETURN(families::DecodeOutput decoded,
                     model_->Decode(latents.narrow(0, output, 1), decode));
    rgb.push_back(std::move(decoded.images.rgb));
  }
  return at::cat(rgb, /*dim=*/0);
}

}  // namespace ditserve::engine
