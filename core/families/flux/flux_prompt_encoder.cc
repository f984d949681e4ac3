#include "core/families/flux/flux_prompt_encoder.h"

#include <torch/torch.h>

#include <utility>

#include "core/base/status_macros.h"
#include "core/models/text/token_ids.h"

namespace ditserve::families {

FluxPromptEncoder::FluxPromptEncoder(
    tokenizers::CLIPTokenizer clip_tokenizer,
    std::shared_ptr<models::CLIPTextModel> clip,
    tokenizers::T5Tokenizer t5_tokenizer,
    std::shared_ptr<models::T5EncoderModel> t5, models::Placement placement)
    : clip_tokenizer_(std::move(clip_tokenizer)),
      clip_(std::move(clip)),
      t5_tokenizer_(std::move(t5_tokenizer)),
      t5_(std::move(t5)),
      placement_(placement) {}

absl::StatusOr<std::unique_ptr<FluxPromptEncoder>> FluxPromptEncoder::Load(
    const std::string& pipeline_dir, const models::Placement& placement) {
  ASSIGN_OR_RETURN(
      tokenizers::CLIPTokenizer clip_tokenizer,
      tokenizers::CLIPTokenizer::Load(pipeline_dir + "/tokenizer"));
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::CLIPTextModel> clip,
      models::LoadCLIPTextModel(pipeline_dir + "/text_encoder", placement));
  ASSIGN_OR_RETURN(
      tokenizers::T5Tokenizer t5_tokenizer,
      tokenizers::T5Tokenizer::Load(pipeline_dir + "/tokenizer_2"));
  ASSIGN_OR_RETURN(
      std::shared_ptr<models::T5EncoderModel> t5,
      models::LoadT5EncoderModel(pipeline_dir + "/text_encoder_2", placement));
  return std::unique_ptr<FluxPromptEncoder>(
      new FluxPromptEncoder(std::move(clip_tokenizer), std::move(clip),
                            std::move(t5_tokenizer), std::move(t5), placement));
}

absl::StatusOr<FluxPromptEmbeddings> FluxPromptEncoder::Encode(
    const std::vector<std::string>& prompts, int max_sequence_length) {
  FluxPromptEmbeddings out;
  ASSIGN_OR_RETURN(at::Tensor clip_ids,
                   models::PaddedTokenIds(
                       prompts, clip_tokenizer_.model_max_length(),
                       [this](absl::string_view text, int length) {
                         return clip_tokenizer_.EncodePadded(text, length);
                       },
                       placement_.device));
  ASSIGN_OR_RETURN(at::Tensor t5_ids,
                   models::PaddedTokenIds(
                       prompts, max_sequence_length,
                       [this](absl::string_view text, int length) {
                         return t5_tokenizer_.EncodePadded(text, length);
                       },
                       placement_.device));
  out.clip_input_ids = clip_ids;
  out.t5_input_ids = t5_ids;

  torch::NoGradGuard no_grad;
  ASSIGN_OR_RETURN(models::CLIPTextOutput clip, clip_->Forward(clip_ids));
  out.pooled_prompt_embeds = clip.pooler_output;
  ASSIGN_OR_RETURN(out.prompt_embeds, t5_->Forward(t5_ids));
  return out;
}

}  // namespace ditserve::families
