#include "core/engine/pixart_rank_program.h"

#include <torch/torch.h>

#include <utility>

#include "core/base/status_macros.h"
#include "core/engine/cfg_run_fields.h"
#include "core/engine/dp_gather.h"

namespace ditserve::engine {

PixArtRankProgram::PixArtRankProgram(
    std::unique_ptr<pipelines::PixArtPromptEncoder> encoder,
    std::unique_ptr<pipelines::PixArtPipeline> pixart,
    std::shared_ptr<parallel::StaleKvAttention> stale_kv)
    : encoder_(std::move(encoder)),
      pixart_(std::move(pixart)),
      stale_kv_(std::move(stale_kv)) {}

absl::StatusOr<at::Tensor> PixArtRankProgram::Generate(RankContext& context,
                                                       int first, int end) {
  const v1::InputConfig& config = context.config;
  pipelines::PixArtRequest request;
  {
    ScopedStageTimer timer(context.timings, Stage::kTextEncode);
    ASSIGN_OR_RETURN(pipelines::PixArtPromptEmbeddings positive,
                     encoder_->Encode(PromptRange(config.prompt(), first, end),
                                      config.max_sequence_length()));
    request.prompt_embeds = positive.prompt_embeds;
    request.prompt_attention_mask = positive.prompt_attention_mask;
    if (config.do_classifier_free_guidance()) {
      ASSIGN_OR_RETURN(
          pipelines::PixArtPromptEmbeddings negative,
          encoder_->Encode(PromptRange(config.negative_prompt(), first, end),
                           config.max_sequence_length()));
      request.negative_prompt_embeds = negative.prompt_embeds;
      request.negative_prompt_attention_mask = negative.prompt_attention_mask;
    }
  }
  RETURN_IF_ERROR(SetCfgRunFields(context, first, end, stale_kv_, request));
  return DenoiseFromSeeds(context, *pixart_, request);
}

absl::StatusOr<at::Tensor> PixArtRankProgram::Run(RankContext& context) {
  return RunDpGroup(context, [this, &context](int first, int end) {
    return Generate(context, first, end);
  });
}

absl::StatusOr<at::Tensor> PixArtRankProgram::Decode(
    const v1::InputConfig& config, const at::Tensor& latents,
    StageTimings& timings) {
  ScopedStageTimer timer(timings, Stage::kVaeDecode);
  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(pipelines::PixArtDecodeOutput decoded,
                   pixart_->Decode(latents, config::ImageSize{config.height(),
                                                              config.width()}));
  return decoded.images.rgb;
}

}  // namespace ditserve::engine
