#include "core/engine/sd3_rank_program.h"

#include <torch/torch.h>

#include <utility>

#include "core/base/status_macros.h"
#include "core/engine/cfg_run_fields.h"
#include "core/engine/dp_gather.h"

namespace ditserve::engine {

SD3RankProgram::SD3RankProgram(
    std::unique_ptr<pipelines::SD3PromptEncoder> encoder,
    std::unique_ptr<pipelines::SD3Pipeline> sd3,
    std::shared_ptr<parallel::StaleKvAttention> stale_kv)
    : encoder_(std::move(encoder)),
      sd3_(std::move(sd3)),
      stale_kv_(std::move(stale_kv)) {}

absl::StatusOr<at::Tensor> SD3RankProgram::Generate(RankContext& context,
                                                    int first, int end) {
  const v1::InputConfig& config = context.config;
  pipelines::SD3Request request;
  {
    ScopedStageTimer timer(context.timings, Stage::kTextEncode);
    ASSIGN_OR_RETURN(pipelines::SD3PromptEmbeds positive,
                     encoder_->Encode(PromptRange(config.prompt(), first, end),
                                      config.max_sequence_length()));
    request.prompt_embeds = positive.prompt_embeds;
    request.pooled_prompt_embeds = positive.pooled_prompt_embeds;
    if (config.do_classifier_free_guidance()) {
      ASSIGN_OR_RETURN(
          pipelines::SD3PromptEmbeds negative,
          encoder_->Encode(PromptRange(config.negative_prompt(), first, end),
                           config.max_sequence_length()));
      request.negative_prompt_embeds = negative.prompt_embeds;
      request.negative_pooled_prompt_embeds = negative.pooled_prompt_embeds;
    }
  }
  RETURN_IF_ERROR(SetCfgRunFields(context, first, end, stale_kv_, request));

  return DenoiseFromSeeds(context, *sd3_, request);
}

absl::StatusOr<at::Tensor> SD3RankProgram::Run(RankContext& context) {
  return RunDpGroup(context, [this, &context](int first, int end) {
    return Generate(context, first, end);
  });
}

absl::StatusOr<at::Tensor> SD3RankProgram::Decode(
    const v1::InputConfig& /*config*/, const at::Tensor& latents,
    StageTimings& timings) {
  ScopedStageTimer timer(timings, Stage::kVaeDecode);
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(pipelines::SD3DecodeOutput decoded, sd3_->Decode(latents));
  return decoded.images.rgb;
}

}  // namespace ditserve::engine
